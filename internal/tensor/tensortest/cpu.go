// Package tensortest holds helpers for the benchmarks of the tensor
// operators and the models built on them.
package tensortest

import "testing"

// CPUTimer measures the CPU time (user + system, all threads) the process
// spends between Start and Stop: on a shared machine the wall time of a
// benchmark depends on the other jobs, its CPU time much less.
type CPUTimer struct{ start float64 }

// Start records the process's CPU time so far.
func (t *CPUTimer) Start() { t.start = processCPU() }

// Report adds the CPU seconds per iteration since Start as the metric
// "cpu-s/op" (nothing where the platform cannot say).
func (t *CPUTimer) Report(b *testing.B) {
	if s := processCPU(); s > 0 && b.N > 0 {
		b.ReportMetric((s-t.start)/float64(b.N), "cpu-s/op")
	}
}
