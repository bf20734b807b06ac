package main

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"time"
)

// turnsJSON holds the model turns measured in public Claude Code transcripts
// (docs/benchmarks.md says how): numbers only, each with where it came from.
//
//go:embed testdata/turns.json
var turnsJSON []byte

type turnSample struct {
	Repo         string `json:"repo"`
	Path         string `json:"path"`
	Commit       string `json:"commit"`
	ClaudeCode   string `json:"claude_code"`
	After        string `json:"after"` // tool_result or prompt
	From         string `json:"from"`
	To           string `json:"to"`
	ThinkMS      int64  `json:"think_ms"`
	OutputTokens int64  `json:"output_tokens"`
	FinalUsage   bool   `json:"final_usage"`
}

type turnsFile struct {
	Method   string `json:"method"`
	Sessions []struct {
		Repo          string `json:"repo"`
		Path          string `json:"path"`
		Commit        string `json:"commit"`
		ModelRequests int    `json:"model_requests"`
	} `json:"sessions"`
	Samples []turnSample `json:"samples"`
}

func loadTurns(data []byte) (*turnsFile, error) {
	var f turnsFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("turns.json: %v", err)
	}
	if len(f.thinks()) == 0 || len(f.outputs()) == 0 {
		return nil, fmt.Errorf("turns.json: needs samples with think_ms and with a final output_tokens")
	}
	return &f, nil
}

// thinks are the think times in milliseconds.
func (f *turnsFile) thinks() []float64 {
	var xs []float64
	for _, s := range f.Samples {
		if s.ThinkMS > 0 {
			xs = append(xs, float64(s.ThinkMS))
		}
	}
	return xs
}

// outputs are the output token counts that are a request's final count (the
// transcripts' placeholders from message_start are left out).
func (f *turnsFile) outputs() []float64 {
	var xs []float64
	for _, s := range f.Samples {
		if s.FinalUsage {
			xs = append(xs, float64(s.OutputTokens))
		}
	}
	return xs
}

// sessions counts the distinct transcripts the samples came from.
func (f *turnsFile) sessions() int {
	seen := map[string]bool{}
	for _, s := range f.Samples {
		seen[s.Repo+"/"+s.Path] = true
	}
	return len(seen)
}

// stats: median, 90th percentile (nearest rank) and mean.
type stats struct {
	N                 int
	Median, P90, Mean float64
}

func describe(xs []float64) stats {
	if len(xs) == 0 {
		return stats{}
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	var sum float64
	for _, x := range s {
		sum += x
	}
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	rank := int(math.Ceil(0.9*float64(len(s)))) - 1
	return stats{N: len(s), Median: med, P90: s[max(rank, 0)], Mean: sum / float64(len(s))}
}

// turnDraw is one scripted model turn: how long the model thinks before
// answering, and how many output tokens the answer counts.
type turnDraw struct {
	Delay  time.Duration
	Output int64
}

// draw picks n turns from the measured samples with a fixed seed: the same
// seed and samples give the same turns. scale multiplies the think times
// (1 = as measured).
func (f *turnsFile) draw(n int, seed uint64, scale float64) []turnDraw {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	thinks, outs := f.thinks(), f.outputs()
	out := make([]turnDraw, n)
	for i := range out {
		ms := thinks[rng.IntN(len(thinks))] * scale
		out[i] = turnDraw{
			Delay:  time.Duration(ms * float64(time.Millisecond)).Round(time.Millisecond),
			Output: int64(outs[rng.IntN(len(outs))]),
		}
	}
	return out
}
