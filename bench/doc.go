// Package bench holds zerg's benchmarks: speed and memory figures are measured
// here, never asserted in timed tests. Run them with `make bench`.
package bench
