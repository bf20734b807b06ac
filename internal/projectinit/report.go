package projectinit

// Report is what zerg init did, per path relative to the repository root,
// in the lists an Outcome's Kind names: the JSON of zerg init --json.
type Report struct {
	Root     string   `json:"root"`
	Created  []string `json:"created"`
	Existing []string `json:"existing"`
	Updated  []string `json:"updated"`
}

// NewReport is an empty report of the repository at root, its lists empty
// rather than nil so the JSON holds [] for a list nothing went to.
func NewReport(root string) Report {
	return Report{Root: root, Created: []string{}, Existing: []string{}, Updated: []string{}}
}

// List is the list an outcome of kind k goes to.
func (r *Report) List(k Kind) *[]string {
	switch k {
	case Created:
		return &r.Created
	case Updated:
		return &r.Updated
	}
	return &r.Existing
}

// Changed reports whether init wrote anything: a path created or updated.
func (r *Report) Changed() bool { return len(r.Created)+len(r.Updated) > 0 }
