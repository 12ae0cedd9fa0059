module github.com/polyhedral/cpm

go 1.26.8

require (
	github.com/klauspost/compress v1.20.3
	golang.org/x/sync v0.24.0
	golang.org/x/sys v0.49.0
)

require gonum.org/v1/gonum v0.17.0
