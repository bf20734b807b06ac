package security

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// RuleFile is one rules file selected for a task.
type RuleFile struct {
	// Path is the slash path inside the cache directory, e.g.
	// "rules/languages/go/CLAUDE.md".
	Path string `json:"path"`
	// Kind is "core", "language", "framework" or "tooling".
	Kind string `json:"kind"`
	// For lists the selections that asked for the file ("core", "go",
	// "typescript", …).
	For []string `json:"for"`
	// Because lists up to three of the task's paths that selected it (empty
	// for core).
	Because []string `json:"because,omitempty"`
	Size    int      `json:"size"`
	Content []byte   `json:"-"`
}

// coreRules is given to every task: the OWASP Top 10 file, which every
// language file of the rules repository names as its one prerequisite. The
// other files in rules/_core cover AI/ML, agents, MCP, RAG and graph databases:
// topic rules that no file extension identifies, so they are left out like
// the backend frameworks (see docs/rules.md).
var coreRules = []string{"_core/owasp-2025.md"}

// ruleSet is one selection: the directories (under rules/) whose *.md files
// it adds, and the kind of rules they are.
type ruleSet struct {
	kind string
	dirs []string
}

// ruleSets maps a selection name to its directories. TypeScript, Vue and
// Svelte include the JavaScript rules because their upstream files list them
// as a prerequisite ("all rules apply"); the IaC, container and CI files
// include their category's _core file for the same reason.
var ruleSets = map[string]ruleSet{
	"go":             {"language", []string{"languages/go"}},
	"python":         {"language", []string{"languages/python"}},
	"javascript":     {"language", []string{"languages/javascript"}},
	"typescript":     {"language", []string{"languages/javascript", "languages/typescript"}},
	"rust":           {"language", []string{"languages/rust"}},
	"java":           {"language", []string{"languages/java"}},
	"csharp":         {"language", []string{"languages/csharp"}},
	"ruby":           {"language", []string{"languages/ruby"}},
	"r":              {"language", []string{"languages/r"}},
	"cpp":            {"language", []string{"languages/cpp"}},
	"julia":          {"language", []string{"languages/julia"}},
	"sql":            {"language", []string{"languages/sql"}},
	"vue":            {"framework", []string{"languages/javascript", "frontend/vue"}},
	"svelte":         {"framework", []string{"languages/javascript", "frontend/svelte"}},
	"terraform":      {"tooling", []string{"iac/_core", "iac/terraform"}},
	"docker":         {"tooling", []string{"containers/_core", "containers/docker"}},
	"github-actions": {"tooling", []string{"cicd/_core", "cicd/github-actions"}},
	"gitlab-ci":      {"tooling", []string{"cicd/_core", "cicd/gitlab-ci"}},
}

// selectionExts lists the lower-case file extensions of each selection. Only
// extensions that name one language (or one framework's own file type, like
// .vue) are here: .jsx stays JavaScript rather than React, .h is taken as
// C/C++ (the cpp rules are about memory safety, which C shares).
var selectionExts = map[string][]string{
	"go":         {".go"},
	"python":     {".py", ".pyi", ".pyw", ".pyx"},
	"javascript": {".js", ".mjs", ".cjs", ".jsx"},
	"typescript": {".ts", ".tsx", ".mts", ".cts"},
	"rust":       {".rs"},
	"java":       {".java"},
	"csharp":     {".cs", ".csx", ".cshtml"},
	"ruby":       {".rb", ".rake", ".gemspec", ".erb"},
	"r":          {".r", ".rmd"},
	"cpp":        {".c", ".h", ".cc", ".cpp", ".cxx", ".c++", ".hh", ".hpp", ".hxx", ".h++", ".ipp"},
	"julia":      {".jl"},
	"sql":        {".sql"},
	"vue":        {".vue"},
	"svelte":     {".svelte"},
	"terraform":  {".tf", ".tfvars"},
	"docker":     {".dockerfile"},
}

// extSets is selectionExts inverted: extension -> selection.
var extSets = func() map[string]string {
	m := map[string]string{}
	for s, exts := range selectionExts {
		for _, e := range exts {
			m[e] = s
		}
	}
	return m
}()

// nameSets maps exact file names (base names) to a selection.
var nameSets = map[string]string{
	"Dockerfile":     "docker",
	"Containerfile":  "docker",
	".gitlab-ci.yml": "gitlab-ci",
	"Gemfile":        "ruby",
	"Rakefile":       "ruby",
}

// SelectionFor returns the selection name for one repo-relative path ("go",
// "typescript", …) or "" when no rules are specific to it.
func SelectionFor(p string) string {
	p = filepath.ToSlash(p)
	base := path.Base(p)
	if s, ok := nameSets[base]; ok {
		return s
	}
	if strings.HasPrefix(base, "Dockerfile.") || strings.HasPrefix(base, "Containerfile.") {
		return "docker"
	}
	ext := strings.ToLower(path.Ext(base))
	if (ext == ".yml" || ext == ".yaml") && (strings.HasPrefix(p, ".github/workflows/") || strings.Contains(p, "/.github/workflows/")) {
		return "github-actions"
	}
	return extSets[ext]
}

// RulesFor returns the rules for a task touching paths, read from the cache
// directory dir: the core rules, then the files of each selection the paths
// call for (sorted by path, each once). Paths with no known language add
// nothing, so a task of only such files gets the core rules alone. A selected
// directory missing from the fetched tree is skipped (another pinned commit
// may not have it); missing core rules are an error, since then dir is not a
// rules tree this zerg understands.
//
// RulesFor does not verify the checksum; call VerifyRules first.
func RulesFor(dir string, paths []string) ([]RuleFile, error) {
	root := filepath.Join(dir, rulesSubtree)
	var out []RuleFile
	for _, c := range coreRules {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(c)))
		if err != nil {
			return nil, fmt.Errorf("read core rules: %w (is %s a rules cache? run zerg rules update)", err, dir)
		}
		out = append(out, RuleFile{Path: rulesSubtree + "/" + c, Kind: "core", For: []string{"core"}, Size: len(data), Content: data})
	}
	// selection -> the task paths that asked for it
	because := map[string][]string{}
	for _, p := range paths {
		if s := SelectionFor(p); s != "" {
			because[s] = append(because[s], p)
		}
	}
	names := make([]string, 0, len(because))
	for s := range because {
		names = append(names, s)
	}
	slices.Sort(names)
	byPath := map[string]*RuleFile{}
	var extra []string
	for _, s := range names {
		set := ruleSets[s]
		for _, d := range set.dirs {
			entries, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(d)))
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("read rules: %w", err)
			}
			for _, e := range entries {
				if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".md") {
					continue
				}
				rel := rulesSubtree + "/" + d + "/" + e.Name()
				rf, ok := byPath[rel]
				if !ok {
					data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(d), e.Name()))
					if err != nil {
						return nil, fmt.Errorf("read rules: %w", err)
					}
					kind := set.kind
					if strings.HasPrefix(d, "languages/") {
						kind = "language" // the JavaScript prerequisite of vue is still a language file
					}
					rf = &RuleFile{Path: rel, Kind: kind, Size: len(data), Content: data}
					byPath[rel] = rf
					extra = append(extra, rel)
				}
				if !slices.Contains(rf.For, s) {
					rf.For = append(rf.For, s)
				}
				for _, p := range because[s] {
					if len(rf.Because) < 3 && !slices.Contains(rf.Because, p) {
						rf.Because = append(rf.Because, p)
					}
				}
			}
		}
	}
	slices.Sort(extra)
	for _, p := range extra {
		out = append(out, *byPath[p])
	}
	return out, nil
}
