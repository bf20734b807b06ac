package contextpack

import (
	"math"
	"path"
	"slices"
	"strings"
	"unicode"

	"github.com/zergrush/zerg/internal/spec"
)

// Query is what the spec's sections are ranked against: a task's words and
// its files.
type Query struct {
	Title string   // weighs double
	Text  string   // description, acceptance criteria, the task's context
	Files []string // the paths it creates, modifies and reads
}

// QueryFor is the query of a task.
func QueryFor(t *spec.Task) Query {
	parts := []string{t.Description, t.Context}
	parts = append(parts, t.AcceptanceCriteria...)
	files := append(append([]string{}, t.Files.Owned()...), t.Files.Read...)
	return Query{Title: t.Title, Text: strings.Join(parts, "\n"), Files: files}
}

// Scored is one section's relevance to a query, with why.
type Scored struct {
	Section int     `json:"-"` // index in the ranked slice
	Score   float64 `json:"score"`
	// Terms are the query's words found in the section that add the most
	// to its score, the strongest first (at most maxTerms).
	Terms []string `json:"terms,omitempty"`
	// Names are the task's files (full path or base name) and identifiers
	// the section names verbatim.
	Names []string `json:"names,omitempty"`
}

// The scorer is BM25 over words (the usual k1 and b), with the words of a
// section's heading trail counted headingWeight times and the task title's
// words weighing titleWeight, plus a bonus for each of the task's files or
// identifiers the section names verbatim: a full path counts as two words
// found in one section only, a base name or identifier as one.
const (
	bm25K1        = 1.2
	bm25B         = 0.75
	headingWeight = 3
	titleWeight   = 2
	maxTerms      = 10 // terms named in a score's explanation
)

// Rank scores every section against the query. The result is in the
// sections' order; Select orders it. Deterministic: no map iteration
// decides anything.
func Rank(q Query, secs []Section) []Scored {
	n := len(secs)
	out := make([]Scored, n)
	if n == 0 {
		return out
	}
	docs := make([]map[string]int, n)
	lens := make([]int, n)
	df := map[string]int{}
	total := 0
	for i, s := range secs {
		tf := map[string]int{}
		for _, w := range words(s.Body) {
			tf[w]++
			lens[i]++
		}
		for _, h := range s.Trail {
			for _, w := range words(h) {
				tf[w] += headingWeight
				lens[i] += headingWeight
			}
		}
		for w := range tf {
			df[w]++
		}
		docs[i] = tf
		total += lens[i]
	}
	avg := float64(total) / float64(n)
	if avg == 0 {
		avg = 1
	}
	idf := func(w string) float64 {
		d := float64(df[w])
		return math.Log(1 + (float64(n)-d+0.5)/(d+0.5))
	}
	rare := math.Log(1 + (float64(n)-0.5)/1.5) // a word found in one section only

	// Query words with their weights, in first-seen order.
	var qwords []string
	weight := map[string]float64{}
	add := func(text string, wt float64) {
		for _, w := range words(text) {
			if _, ok := weight[w]; !ok {
				qwords = append(qwords, w)
			}
			weight[w] = max(weight[w], wt)
		}
	}
	add(q.Title, titleWeight)
	add(q.Text, 1)
	for _, f := range q.Files {
		add(f, 1)
	}
	names := nameCandidates(q)

	for i, s := range secs {
		sc := Scored{Section: i}
		type hit struct {
			w string
			v float64
		}
		var hits []hit
		for _, w := range qwords {
			tf := float64(docs[i][w])
			if tf == 0 {
				continue
			}
			v := weight[w] * idf(w) * tf * (bm25K1 + 1) / (tf + bm25K1*(1-bm25B+bm25B*float64(lens[i])/avg))
			hits = append(hits, hit{w, v})
			sc.Score += v
		}
		slices.SortStableFunc(hits, func(a, b hit) int {
			switch {
			case a.v > b.v:
				return -1
			case a.v < b.v:
				return 1
			}
			return 0
		})
		for _, h := range hits[:min(len(hits), maxTerms)] {
			sc.Terms = append(sc.Terms, h.w)
		}
		text := s.Body + "\n" + strings.Join(s.Trail, "\n")
		for _, nm := range names {
			if containsName(text, nm.text) {
				sc.Score += nm.weight * rare
				sc.Names = append(sc.Names, nm.text)
			}
		}
		sc.Score = math.Round(sc.Score*1000) / 1000
		out[i] = sc
	}
	return out
}

type name struct {
	text   string
	weight float64
}

// nameCandidates are the verbatim names a section can mention: the task's
// file paths (weight 2), their base names and the identifiers in its text
// (weight 1: words in backquotes, CamelCase, snake_case or dotted names).
// Each once, in first-seen order; a base name equal to its path counts once.
func nameCandidates(q Query) []name {
	var out []name
	seen := map[string]bool{}
	add := func(s string, wt float64) {
		s = strings.TrimSpace(s)
		if len(s) < 3 || seen[s] {
			return
		}
		seen[s] = true
		out = append(out, name{s, wt})
	}
	for _, f := range q.Files {
		add(f, 2)
	}
	for _, f := range q.Files {
		add(path.Base(f), 1)
	}
	for _, text := range []string{q.Title, q.Text} {
		for _, tok := range strings.FieldsFunc(text, func(r rune) bool {
			return !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '.' || r == '/' || r == '-')
		}) {
			tok = strings.Trim(tok, ".-/")
			if isIdentifier(tok) {
				add(tok, 1)
			}
		}
	}
	return out
}

// isIdentifier says whether a word looks like code rather than prose:
// CamelCase (an upper-case letter after a lower-case one), snake_case, or a
// dotted name such as config.yaml or http.Handler.
func isIdentifier(s string) bool {
	if len(s) < 3 || !unicode.IsLetter(rune(s[0])) && s[0] != '_' {
		return false
	}
	if strings.Contains(s, "_") {
		return true
	}
	if parts := strings.Split(s, "."); len(parts) > 1 {
		for _, p := range parts {
			if len(p) < 2 {
				return false // e.g, i.e
			}
		}
		return true
	}
	prevLower := false
	for _, r := range s {
		if unicode.IsUpper(r) && prevLower {
			return true
		}
		prevLower = unicode.IsLower(r) || unicode.IsDigit(r)
	}
	return false
}

// containsName reports whether text names nm as a whole: not inside a
// longer name or path ("limit.go" is not named by "ratelimit.go" nor by
// "other/limit.go"); a full stop after it ends the name.
func containsName(text, nm string) bool {
	isName := func(r byte) bool {
		return r == '_' || r == '/' || r == '-' ||
			'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	for off := 0; ; {
		i := strings.Index(text[off:], nm)
		if i < 0 {
			return false
		}
		i += off
		j := i + len(nm)
		if (i == 0 || !isName(text[i-1])) && (j == len(text) || !isName(text[j])) {
			return true
		}
		off = i + 1
	}
}

// words splits text into the scorer's terms: lower-case runs of letters and
// digits, CamelCase and snake_case split into their parts (the whole kept
// too), stop words and one-letter words dropped, plural endings removed.
func words(text string) []string {
	var out []string
	for _, raw := range strings.FieldsFunc(text, func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r))
	}) {
		parts := camelParts(raw)
		if len(parts) > 1 {
			out = appendWord(out, strings.ToLower(raw))
		}
		for _, p := range parts {
			out = appendWord(out, strings.ToLower(p))
		}
	}
	return out
}

func appendWord(out []string, w string) []string {
	if len(w) < 2 || stopWords[w] {
		return out
	}
	return append(out, stem(w))
}

// camelParts splits "RateLimiter" into "Rate", "Limiter" and "HTTPServer"
// into "HTTP", "Server".
func camelParts(s string) []string {
	rs := []rune(s)
	var parts []string
	start := 0
	for i := 1; i < len(rs); i++ {
		lowerToUpper := unicode.IsLower(rs[i-1]) && unicode.IsUpper(rs[i])
		acronymEnd := i+1 < len(rs) && unicode.IsUpper(rs[i-1]) && unicode.IsUpper(rs[i]) && unicode.IsLower(rs[i+1])
		if lowerToUpper || acronymEnd {
			parts = append(parts, string(rs[start:i]))
			start = i
		}
	}
	return append(parts, string(rs[start:]))
}

// stem removes English plural endings: "entries" → "entry", "boxes" →
// "box", "tokens" → "token"; "class", "status" and "analysis" stay.
func stem(w string) string {
	switch {
	case len(w) > 4 && strings.HasSuffix(w, "ies"):
		return w[:len(w)-3] + "y"
	case len(w) > 4 && (strings.HasSuffix(w, "sses") || strings.HasSuffix(w, "xes") || strings.HasSuffix(w, "ches") || strings.HasSuffix(w, "shes")):
		return w[:len(w)-2]
	case len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		return w[:len(w)-1]
	}
	return w
}

var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an and are as at be been but by can could did do does each either for from
		had has have how if in into is it its itself may more most must no nor not of on once one only or other our
		out over own same shall should so some such than that the their them then there these they this those through
		to too under until up upon very was we were what when where which while who whom why will with would you your
		all any both few also just like use used uses using new make makes get gets set sets via per e.g i.e etc`) {
		m[w] = true
	}
	return m
}()
