// Package compute is what the tasks of package cluster compute, and how a
// local cpm train, cv or tune run hands its parts to them.
//
// A task carries a learner by name with the text value of every learner
// flag (learner.Flags.Values), its label and seed, and the digests of its
// rows. Executor runs a task on a worker: it loads the rows the digest
// names (a row cache file written by WriteData, fetched by the cluster
// engine and verified), rebuilds the learner spec exactly as cpm builds it
// from the command line, and computes
//
//   - train-part: polytope Part of the CPM run learner.Plan makes of the
//     rows (sgd.Plan.TrainPart), encoded by sgd.Part.MarshalBinary;
//   - train-model: a whole model of a learner that trains as one piece
//     (model.Write);
//   - cv-fold: fold Part of a cv.Plan (cv.Plan.RunFold), as JSON;
//   - tune-fit: fit Part of one grid point (tune.RunFit), as JSON.
//
// Each of these is the function a local run calls for the same part, on
// the same rows, so a distributed run's outputs are byte for byte the
// local run's. Remote is the other side: sgd.Runner, cv.Config.Exec and
// tune.Config.Exec implementations that turn each part into a task of one
// cluster job and decode its result.
package compute
