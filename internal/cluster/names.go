// Package cluster is the transport for running attempts on other machines:
// an embedded NATS JetStream server owned by the coordinator, the streams and
// buckets the protocol uses, the subject permissions that confine each agent,
// the claim protocol (the coordinator's Dispatcher, which hands attempts out
// and takes them back, and the agent's Claim), the coordinator's lease book
// and agent heartbeats. It has no CLI or configuration of its own; callers wire it.
//
// The coordinator stays the only writer of the user's repository: agents only
// read base bundles, and hand back a result bundle in their own object store
// bucket plus an outcome on their own result subject.
package cluster

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"regexp"
)

// Names of the JetStream assets. They are fixed (not configurable) because the
// agents' subject permissions are derived from them.
const (
	// StreamResults holds outcomes: zerg.result.<agent>.<attempt id>.
	StreamResults = "ZERG_RESULTS"
	// SubjectResults prefixes result subjects.
	SubjectResults = "zerg.result"

	// BucketAgents is the KV bucket of agent heartbeats (key = agent name).
	BucketAgents = "zerg_agents"
	// BucketLeases is the coordinator-private KV bucket for leases.
	BucketLeases = "zerg_leases"
	// BucketBundles is the object store of base bundles: the coordinator
	// writes, agents read.
	BucketBundles = "zerg_bundles"
	// resultsBucketPrefix + agent is the object store bucket an agent puts
	// its result bundles into. One bucket per agent, because an object's
	// meta subject is $O.<bucket>.M.<base64(name)>, a single token: subject
	// permissions cannot confine an agent to a name prefix inside a shared
	// bucket, but they can confine it to a bucket.
	resultsBucketPrefix = "zerg_results_"

	// CoordinatorUser is the user name of the coordinator (full
	// permissions). No agent may take this name.
	CoordinatorUser = "zerg"
)

// tokenRe is what an agent name or attempt id may look like: it is used as a
// single subject token, inside a bucket name and inside an inbox prefix, so
// no dots, wildcards, spaces or other separators.
var tokenRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,79}$`)

// ValidAgentName reports whether name can name an agent.
func ValidAgentName(name string) error {
	if !tokenRe.MatchString(name) || len(name) > 48 {
		return fmt.Errorf("cluster: invalid agent name %q: want 1-48 characters of [A-Za-z0-9_-], starting with a letter or digit", name)
	}
	if name == CoordinatorUser {
		return fmt.Errorf("cluster: agent name %q is reserved for the coordinator", name)
	}
	return nil
}

// ResultsBucket is the object store bucket holding agent's result bundles.
func ResultsBucket(agent string) string { return resultsBucketPrefix + agent }

// inboxPrefix is the reply-subject prefix a user's connection uses. Agents
// may only subscribe below their own prefix, so they cannot read replies (API
// responses, claimed attempts, object chunks) meant for another client.
func inboxPrefix(user string) string { return "_INBOX_" + user }

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return hex.EncodeToString(b)
}
