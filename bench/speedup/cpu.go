package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// cpuTimes are the machine's CPU times (all CPUs together) from /proc/stat's
// first line, in clock ticks.
type cpuTimes struct{ busy, total uint64 }

func readCPU() (cpuTimes, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuTimes{}, err
	}
	return parseCPU(string(b))
}

// parseCPU reads the "cpu" line: user nice system idle iowait irq softirq
// steal ...; idle and iowait are not busy.
func parseCPU(stat string) (cpuTimes, error) {
	line, _, _ := strings.Cut(stat, "\n")
	f := strings.Fields(line)
	if len(f) < 6 || f[0] != "cpu" {
		return cpuTimes{}, fmt.Errorf("/proc/stat: no cpu line")
	}
	var t cpuTimes
	for i, s := range f[1:] {
		if i >= 8 { // guest and guest_nice are already in user and nice
			break
		}
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return cpuTimes{}, fmt.Errorf("/proc/stat: %v", err)
		}
		t.total += n
		if i != 3 && i != 4 {
			t.busy += n
		}
	}
	return t, nil
}

// busySince is the share of the CPU time since earlier that was busy.
func (t cpuTimes) busySince(earlier cpuTimes) float64 {
	total := t.total - earlier.total
	if total == 0 || t.total < earlier.total {
		return 0
	}
	return float64(t.busy-earlier.busy) / float64(total)
}
