package diagnose

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
)

// The classifier is a Bernoulli naive Bayes over the features of an output:
// each pattern has a prior and, for each feature, the probability that an
// output of that pattern has it, both counted in the corpus's training
// split with add-α smoothing. The posterior is softened by a temperature
// fitted by cross-validation on the training split, so that a confidence
// of 0.8 is right about 80 % of the time (docs/diagnose.md has the
// calibration table).

// Model is the classifier's parameters.
type Model struct {
	Patterns    []string    `json:"patterns"`
	Features    []string    `json:"features"`
	LogPrior    []float64   `json:"log_prior"`
	LogP        [][]float64 `json:"log_p"` // [pattern][feature]: log P(present | pattern)
	LogQ        [][]float64 `json:"log_q"` // [pattern][feature]: log P(absent | pattern)
	Temperature float64     `json:"temperature"`
	Samples     int         `json:"samples"` // training samples
}

// Sample is one labelled output.
type Sample struct {
	Input
	Pattern string
}

// strength is the weight, in samples, of a likelihood's prior: the
// feature's frequency over the whole corpus. A pattern with few samples
// then keeps the corpus's view of a feature it has not shown, instead of
// the 50 % of add-one smoothing, which charges a rare pattern for every
// feature it has never seen.
const strength = 8.0

// keyOn and keyOff are the Beta prior of a pattern's expected features
// (features.go).
const keyOn, keyOff = 2, 0.25

// Train estimates a model from labelled samples: the priors, the
// likelihoods, and the temperature (by k-fold cross-validation on the
// samples themselves).
func Train(samples []Sample) *Model { return trainOn(samples, featuresOf(samples)) }

// trainOn is Train on the samples' features, featuresOf(samples): the
// tests compute them once for the model and the cross-validation.
func trainOn(samples []Sample, feats [][]string) *Model {
	m := fit(samples, feats)
	m.Temperature = fitTemperature(samples, feats)
	return m
}

// featuresOf computes the samples' features, on every CPU: the regular
// expressions are most of the cost of training.
func featuresOf(samples []Sample) [][]string {
	feats := make([][]string, len(samples))
	var wg sync.WaitGroup
	next := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := range next {
				feats[i] = Features(samples[i].Input, Parse(samples[i].Output))
			}
		})
	}
	for i := range samples {
		next <- i
	}
	close(next)
	wg.Wait()
	return feats
}

// fit counts the priors and likelihoods.
func fit(samples []Sample, feats [][]string) *Model {
	m := &Model{Samples: len(samples), Temperature: 1}
	for _, p := range Patterns {
		m.Patterns = append(m.Patterns, p.ID)
	}
	fset := map[string]bool{}
	for _, fs := range feats {
		for _, f := range fs {
			fset[f] = true
		}
	}
	for f := range fset {
		m.Features = append(m.Features, f)
	}
	sort.Strings(m.Features)
	fidx := map[string]int{}
	for i, f := range m.Features {
		fidx[f] = i
	}
	pidx := map[string]int{}
	for i, p := range m.Patterns {
		pidx[p] = i
	}
	// count[c][f]: samples of pattern c with feature f; seen[c][f]: samples
	// of pattern c in which f counts (its language is the sample's).
	n := make([]float64, len(m.Patterns))
	count := make([][]float64, len(m.Patterns))
	seen := make([][]float64, len(m.Patterns))
	for c := range count {
		count[c] = make([]float64, len(m.Features))
		seen[c] = make([]float64, len(m.Features))
	}
	for i, s := range samples {
		c, ok := pidx[s.Pattern]
		if !ok {
			continue
		}
		n[c]++
		active := activeFamilies(feats[i])
		for f, name := range m.Features {
			if counts(name, active) {
				seen[c][f]++
			}
		}
		for _, f := range feats[i] {
			count[c][fidx[f]]++
		}
	}
	total := float64(len(samples))
	overall := make([]float64, len(m.Features))
	for f := range overall {
		var has, of float64
		for c := range count {
			has += count[c][f]
			of += seen[c][f]
		}
		overall[f] = (has + 0.5) / (of + 1)
	}
	k := float64(len(m.Patterns))
	for c := range m.Patterns {
		m.LogPrior = append(m.LogPrior, math.Log((n[c]+1)/(total+k)))
		lp := make([]float64, len(m.Features))
		lq := make([]float64, len(m.Features))
		key := expected[m.Patterns[c]]
		for f, name := range m.Features {
			p := (count[c][f] + strength*overall[f]) / (seen[c][f] + strength)
			if slices.Contains(key, name) {
				p = (count[c][f] + keyOn) / (seen[c][f] + keyOn + keyOff)
			}
			lp[f], lq[f] = math.Log(p), math.Log(1-p)
		}
		m.LogP = append(m.LogP, lp)
		m.LogQ = append(m.LogQ, lq)
	}
	return m
}

// logits are the unnormalised log posteriors of every pattern for a
// feature list.
func (m *Model) logits(feats []string) []float64 {
	present := make([]bool, len(m.Features))
	for _, f := range feats {
		if i, ok := slices.BinarySearch(m.Features, f); ok {
			present[i] = true
		}
	}
	active := activeFamilies(feats)
	out := make([]float64, len(m.Patterns))
	for c := range m.Patterns {
		s := m.LogPrior[c]
		for f, on := range present {
			switch {
			case on:
				s += m.LogP[c][f]
			case counts(m.Features[f], active):
				s += m.LogQ[c][f]
			}
		}
		out[c] = s
	}
	return out
}

// A feature of a language the output is not in is not absent, it is out
// of place: a Go build says nothing about pytest's phrases. Only the
// features of the languages an output shows (all of them, when it shows
// none) count, in training and in diagnosis alike, so that the likelihood
// of a Python phrase is estimated over Python outputs.

// activeFamilies are the languages a feature list shows.
func activeFamilies(feats []string) map[string]bool {
	active := map[string]bool{}
	for _, f := range feats {
		if fam := family(f); fam != "" {
			active[fam] = true
		}
	}
	return active
}

// counts reports whether a feature counts for an output of the active
// languages.
func counts(f string, active map[string]bool) bool {
	fam := family(f)
	return fam == "" || len(active) == 0 || active[fam]
}

// posterior is softmax(logits / T).
func posterior(logits []float64, t float64) []float64 {
	mx := math.Inf(-1)
	for _, l := range logits {
		mx = max(mx, l/t)
	}
	out := make([]float64, len(logits))
	sum := 0.0
	for i, l := range logits {
		out[i] = math.Exp(l/t - mx)
		sum += out[i]
	}
	for i := range out {
		out[i] /= sum
	}
	return out
}

// folds is the k of the cross-validation that fits the temperature.
const folds = 5

// fitTemperature picks the temperature that minimises the negative log
// likelihood of the true pattern over out-of-fold predictions.
func fitTemperature(samples []Sample, feats [][]string) float64 {
	if len(samples) < 2*folds {
		return 1
	}
	type pred struct {
		logits []float64
		truth  int
	}
	var preds []pred
	for k := range folds {
		var trS []Sample
		var trF [][]string
		var teI []int
		for i := range samples {
			if i%folds == k {
				teI = append(teI, i)
			} else {
				trS, trF = append(trS, samples[i]), append(trF, feats[i])
			}
		}
		m := fit(trS, trF)
		for _, i := range teI {
			truth := slices.Index(m.Patterns, samples[i].Pattern)
			if truth >= 0 {
				preds = append(preds, pred{m.logits(feats[i]), truth})
			}
		}
	}
	best, bestNLL := 1.0, math.Inf(1)
	for t := 0.5; t <= 200; t *= 1.05 {
		nll := 0.0
		for _, p := range preds {
			nll -= math.Log(max(posterior(p.logits, t)[p.truth], 1e-12))
		}
		if nll < bestNLL {
			best, bestNLL = t, nll
		}
	}
	return math.Round(best*1000) / 1000
}

//go:embed model.json
var modelJSON []byte

// trained is the model zerg ships, trained on the corpus's training split
// (go test ./internal/diagnose -run TestModelIsTheCorpus -update writes it).
// It is read on first use: decoding it took 18 ms of the start of every zerg
// process, most of which never diagnose anything (a hook, a sandbox's init).
var trained = sync.OnceValue(func() *Model { return mustLoad(modelJSON) })

func mustLoad(data []byte) *Model {
	var m Model
	if err := json.Unmarshal(data, &m); err != nil {
		panic(fmt.Sprintf("diagnose: the embedded model does not load: %v", err))
	}
	return &m
}

// family is the language a feature belongs to, "" for features of any
// output.
func family(f string) string {
	kind, rest, _ := strings.Cut(f, ".")
	switch kind {
	case "sig":
		lang, _, _ := strings.Cut(rest, ".")
		switch lang {
		case "go", "py", "js", "rs":
			return lang
		}
	case "lang":
		return languageFamily[rest]
	case "cmd":
		return programFamily[rest]
	}
	return ""
}

var languageFamily = map[string]string{"go": "go", "python": "py", "javascript": "js", "rust": "rs"}

var programFamily = map[string]string{"go": "go", "gofmt": "go",
	"python": "py", "python3": "py", "pytest": "py", "mypy": "py", "flake8": "py", "pyflakes": "py", "black": "py", "ruff": "py", "pip": "py", "uv": "py",
	"node": "js", "npm": "js", "npx": "js", "jest": "js", "vitest": "js", "tsc": "js", "eslint": "js", "prettier": "js",
	"cargo": "rs", "rustc": "rs", "rustfmt": "rs", "clippy": "rs"}
