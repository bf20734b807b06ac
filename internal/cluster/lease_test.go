package cluster

import (
	"reflect"
	"testing"
)

func TestLeaseBook(t *testing.T) {
	t.Parallel()
	l := func(agent string, n uint64) Lease { return Lease{AttemptID: "x", Agent: agent, Delivery: n} }
	type step struct {
		op      string // observe, accept, dead
		lease   Lease
		want    Verdict
		revoked []Lease
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{"first result accepted once", []step{
			{"observe", l("a", 1), Current, nil},
			{"accept", l("a", 1), Accepted, nil},
			{"accept", l("a", 1), Duplicate, nil},
		}},
		{"a result of a lease never handed out", []step{
			{"accept", l("a", 1), Invalid, nil},
			{"observe", l("a", 1), Current, nil},
			{"accept", l("a", 2), Invalid, nil},
			{"check", l("a", 2), Invalid, nil},
			{"accept", l("a", 1), Accepted, nil},
		}},
		{"newer delivery revokes the older lease", []step{
			{"observe", l("a", 1), Current, nil},
			{"observe", l("b", 2), Current, []Lease{l("a", 1)}},
			{"check", l("a", 1), Revoked, nil},
			{"check", l("b", 2), Current, nil},
			{"accept", l("a", 1), Revoked, nil},
			{"accept", l("b", 2), Accepted, nil},
			{"accept", l("a", 1), Revoked, nil},
			{"accept", l("b", 2), Duplicate, nil},
		}},
		{"a higher delivery than handed out does not win", []step{
			{"observe", l("a", 1), Current, nil},
			{"accept", l("b", 2), Invalid, nil},
			{"accept", l("a", 1), Accepted, nil},
		}},
		{"result of an unseen newer delivery after acceptance", []step{
			{"observe", l("a", 1), Current, nil},
			{"accept", l("a", 1), Accepted, nil},
			{"accept", l("b", 2), Finished, nil},
		}},
		{"same delivery reported by two agents", []step{
			{"observe", l("a", 1), Current, nil},
			{"observe", l("b", 1), Conflict, nil},
			{"accept", l("b", 1), Conflict, nil},
			{"accept", l("a", 1), Accepted, nil},
		}},
		{"repeated observation changes nothing", []step{
			{"observe", l("a", 2), Current, nil},
			{"observe", l("a", 2), Current, nil},
			{"observe", l("a", 1), Invalid, nil},
		}},
		{"bounds", []step{
			{"accept", l("a", 0), Invalid, nil},
			{"accept", l("a", 4), Invalid, nil},
			{"accept", l("", 1), Invalid, nil},
			{"accept", Lease{AttemptID: "y", Agent: "a", Delivery: 1}, Unknown, nil},
		}},
		{"dead-lettered", []step{
			{"observe", l("a", 3), Current, nil},
			{"dead", l("a", 3), 0, nil},
			{"accept", l("a", 3), Dead, nil},
			{"observe", l("a", 3), Dead, nil},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := NewLeaseBook(3)
			b.Register("x")
			for i, s := range tc.steps {
				var v Verdict
				var rev []Lease
				switch s.op {
				case "observe":
					v, rev = b.Observe(s.lease)
				case "accept":
					v, rev = b.Accept(s.lease)
				case "check":
					v = b.Check(s.lease)
				case "dead":
					last, ok := b.DeadLetter(s.lease.AttemptID)
					if !ok || last != s.lease {
						t.Fatalf("step %d: DeadLetter = %v %v, want %v", i, last, ok, s.lease)
					}
					continue
				}
				if v != s.want || !reflect.DeepEqual(rev, s.revoked) {
					t.Fatalf("step %d: %s(%v) = %v %v, want %v %v", i, s.op, s.lease, v, rev, s.want, s.revoked)
				}
				if v.Refused() == (v == Current || v == Accepted) {
					t.Fatalf("step %d: Refused() wrong for %v", i, v)
				}
			}
		})
	}
}

func TestLeaseBookCurrentAndForget(t *testing.T) {
	t.Parallel()
	b := NewLeaseBook(5)
	b.Register("x")
	if _, ok := b.Current("x"); ok {
		t.Fatal("current lease before any delivery")
	}
	b.Observe(Lease{AttemptID: "x", Agent: "a", Delivery: 1})
	if cur, ok := b.Current("x"); !ok || cur.Agent != "a" {
		t.Fatalf("Current = %v %v", cur, ok)
	}
	b.Forget("x")
	if v, _ := b.Accept(Lease{AttemptID: "x", Agent: "a", Delivery: 1}); v != Unknown {
		t.Fatalf("after Forget: %v", v)
	}
}
