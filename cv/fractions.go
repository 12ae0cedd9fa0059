package cv

// setFractions sets the fraction fields of r from its percent fields.
func (r *Result) setFractions() {
	r.AccuracyMeanFraction, r.AccuracyStdFraction = r.AccuracyMean/100, r.AccuracyStd/100
	r.ErrorMeanFraction, r.ErrorStdFraction = r.ErrorMean/100, r.ErrorStd/100
	r.FoldErrorStdFraction = r.FoldErrorStd / 100
	r.TrainErrorMeanFraction, r.TrainErrorStdFraction = r.TrainErrorMean/100, r.TrainErrorStd/100
	r.FoldTrainErrorStdFraction = r.FoldTrainErrorStd / 100
	for i := range r.PerRep {
		p := &r.PerRep[i]
		p.AccuracyFraction, p.TrainErrorFraction = p.Accuracy/100, p.TrainError/100
	}
}
