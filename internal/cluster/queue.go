package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// StreamsConfig tunes EnsureStreams and the claim protocol (the
// coordinator's Dispatcher). Zero fields take the defaults below.
type StreamsConfig struct {
	// AckWait is how long an agent may hold an attempt without a
	// heartbeat naming its lease before the coordinator takes it back
	// (default 60s; DispatchConfig.AckWait).
	AckWait time.Duration
	// MaxDeliver bounds deliveries of one attempt (default 5;
	// DispatchConfig.MaxDeliver).
	MaxDeliver int
	// HeartbeatTTL is how long an agent's heartbeat key lives without a
	// new put (default 5s; agents put every second).
	HeartbeatTTL time.Duration
	// DuplicateWindow is how long Nats-Msg-Id de-duplication remembers an
	// id, for results (default 10 minutes).
	DuplicateWindow time.Duration
}

func (c StreamsConfig) withDefaults() StreamsConfig {
	if c.AckWait == 0 {
		c.AckWait = 60 * time.Second
	}
	if c.MaxDeliver == 0 {
		c.MaxDeliver = 5
	}
	if c.HeartbeatTTL == 0 {
		c.HeartbeatTTL = 5 * time.Second
	}
	if c.DuplicateWindow == 0 {
		c.DuplicateWindow = 10 * time.Minute
	}
	return c
}

// Dispatch is the Dispatcher's part of the settings, with the defaults.
func (c StreamsConfig) Dispatch() DispatchConfig {
	c = c.withDefaults()
	return DispatchConfig{AckWait: c.AckWait, MaxDeliver: c.MaxDeliver}
}

// ResultsConsumer is the coordinator's durable pull consumer of StreamResults.
const ResultsConsumer = "coordinator"

// EnsureStreams creates (or updates to cfg) the streams, consumers and
// buckets of the protocol. The coordinator calls it after StartServer.
// Attempts have no stream: they wait in the coordinator (Dispatcher).
func EnsureStreams(ctx context.Context, js jetstream.JetStream, cfg StreamsConfig) error {
	cfg = cfg.withDefaults()
	if _, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:        StreamResults,
		Description: "zerg: outcomes sent by agents",
		Subjects:    []string{SubjectResults + ".>"},
		Retention:   jetstream.LimitsPolicy,
		Storage:     jetstream.FileStorage,
		Duplicates:  cfg.DuplicateWindow,
		MaxAge:      7 * 24 * time.Hour,
		// Agents publish here: no Nats-Rollup, which would let one
		// agent's message remove the others'.
		AllowRollup: false,
	}); err != nil {
		return fmt.Errorf("cluster: stream %s: %w", StreamResults, err)
	}
	if _, err := js.CreateOrUpdateConsumer(ctx, StreamResults, jetstream.ConsumerConfig{
		Durable:   ResultsConsumer,
		AckPolicy: jetstream.AckExplicitPolicy,
		AckWait:   30 * time.Second,
	}); err != nil {
		return fmt.Errorf("cluster: consumer %s: %w", ResultsConsumer, err)
	}
	if _, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:      BucketAgents,
		Description: "zerg: agent heartbeats",
		// History 1: with more history a key's TTL is raised to the
		// marker TTL, and a silent agent would linger.
		History: 1,
		TTL:     cfg.HeartbeatTTL,
		// Expiry leaves a marker, so watchers see an agent go silent.
		LimitMarkerTTL: time.Second,
		Storage:        jetstream.FileStorage,
	}); err != nil {
		return fmt.Errorf("cluster: bucket %s: %w", BucketAgents, err)
	}
	// Not restricted: expiry markers need rollups enabled on the bucket
	// (the server forces AllowRollup with LimitMarkerTTL), so an agent's
	// put on its own key may carry "Nats-Rollup: all" and erase the other
	// agents' current heartbeats. They come back with the next put (1s);
	// an erased key whose agent is dead leaves no expiry marker, which
	// WatchAgents covers with its own deadline.
	if _, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:      BucketLeases,
		Description: "zerg: leases (coordinator only)",
		History:     1,
		Storage:     jetstream.FileStorage,
	}); err != nil {
		return fmt.Errorf("cluster: bucket %s: %w", BucketLeases, err)
	}
	if _, err := js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{
		Bucket:      BucketBundles,
		Description: "zerg: base bundles (coordinator writes, agents read)",
		Storage:     jetstream.FileStorage,
	}); err != nil {
		return fmt.Errorf("cluster: object store %s: %w", BucketBundles, err)
	}
	return nil
}

// EnsureAgentStore creates the object store bucket an agent puts its result
// bundles into (ResultsBucket). The coordinator calls it after AddAgent.
func EnsureAgentStore(ctx context.Context, js jetstream.JetStream, agent string) error {
	if err := ValidAgentName(agent); err != nil {
		return err
	}
	if _, err := js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{
		Bucket:      ResultsBucket(agent),
		Description: "zerg: result bundles of agent " + agent,
		Storage:     jetstream.FileStorage,
	}); err != nil {
		return fmt.Errorf("cluster: object store %s: %w", ResultsBucket(agent), err)
	}
	return nil
}

// Attempt is one run of a task, as the coordinator hands it to an agent.
type Attempt struct {
	// ID is unique per attempt: task, attempt number and a random nonce
	// (NewAttemptID). It is a subject token (results, the tunnel) and
	// part of every lease; an attempt taken back from its holder waits
	// again under a new one.
	ID     string `json:"id"`
	Task   string `json:"task"`
	Number int    `json:"number"`
	// Base is the commit the attempt starts from; BaseBundle names the
	// object in BucketBundles that carries it.
	Base       string          `json:"base"`
	BaseBundle string          `json:"base_bundle"`
	Spec       json.RawMessage `json:"spec,omitempty"`
	Enqueued   time.Time       `json:"enqueued"`
}

var unsafeToken = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// NewAttemptID makes an attempt id from the task name (characters that
// cannot appear in a subject token become '_'; long names are cut), the
// attempt number and 8 random hex digits.
func NewAttemptID(task string, number int) string {
	t := strings.Trim(unsafeToken.ReplaceAllString(task, "_"), "_")
	if t == "" {
		t = "task"
	}
	if len(t) > 48 {
		t = t[:48]
	}
	return fmt.Sprintf("%s-%d-%s", t, number, randomHex(4))
}

// Result is what an agent reports for one lease.
type Result struct {
	// ID is random per result and set by PublishResult when empty; a
	// retried publish of the same Result is de-duplicated by it.
	ID    string `json:"id"`
	Lease Lease  `json:"lease"`
	// Outcome is the attempt's outcome document, opaque here.
	Outcome json.RawMessage `json:"outcome,omitempty"`
	// Bundle names the object in ResultsBucket(Lease.Agent) holding the
	// git bundle, "" when there is none.
	Bundle   string    `json:"bundle,omitempty"`
	Finished time.Time `json:"finished"`
}

// PublishResult sends r on zerg.result.<agent>.<attempt id>. The
// Nats-Msg-Id is <agent>.<r.ID>: the random part keeps an agent from
// pre-empting another agent's result with a colliding id.
func PublishResult(ctx context.Context, js jetstream.JetStream, r *Result) error {
	if err := ValidAgentName(r.Lease.Agent); err != nil {
		return err
	}
	if !tokenRe.MatchString(r.Lease.AttemptID) {
		return fmt.Errorf("cluster: invalid attempt id %q", r.Lease.AttemptID)
	}
	if r.ID == "" {
		r.ID = randomHex(12)
	}
	if r.Finished.IsZero() {
		r.Finished = time.Now().UTC()
	}
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	subj := SubjectResults + "." + r.Lease.Agent + "." + r.Lease.AttemptID
	if _, err := js.Publish(ctx, subj, b, jetstream.WithMsgID(r.Lease.Agent+"."+r.ID), jetstream.WithExpectStream(StreamResults)); err != nil {
		return fmt.Errorf("cluster: publish result %s: %w", subj, err)
	}
	return nil
}

// ErrForgedResult is returned by ParseResult when a result's body names a
// different agent or attempt than its subject. Subjects are what the server's
// permissions vouch for; bodies are not.
var ErrForgedResult = errors.New("cluster: result body does not match its subject")

// ParseResult decodes a result message received on subject (coordinator
// side) and checks that its lease matches the subject.
func ParseResult(subject string, data []byte) (Result, error) {
	tok := strings.Split(subject, ".")
	if len(tok) != 4 || tok[0]+"."+tok[1] != SubjectResults {
		return Result{}, fmt.Errorf("cluster: %q is not a result subject", subject)
	}
	var r Result
	if err := json.Unmarshal(data, &r); err != nil {
		return Result{}, fmt.Errorf("cluster: result on %s: %w", subject, err)
	}
	if r.Lease.Agent != tok[2] || r.Lease.AttemptID != tok[3] {
		return r, fmt.Errorf("%w: subject %s, lease %s", ErrForgedResult, subject, r.Lease)
	}
	return r, nil
}

// ResultBundleName is the object name of a lease's result bundle: unique
// per lease, so a put never replaces an object (agents may not purge).
func ResultBundleName(l Lease) string {
	return l.AttemptID + "." + strconv.FormatUint(l.Delivery, 10) + ".bundle"
}

// PutBaseBundle stores a base bundle for agents to read (coordinator side).
func PutBaseBundle(ctx context.Context, js jetstream.JetStream, name string, r io.Reader) error {
	obs, err := js.ObjectStore(ctx, BucketBundles)
	if err != nil {
		return fmt.Errorf("cluster: object store %s: %w", BucketBundles, err)
	}
	if _, err := obs.Put(ctx, jetstream.ObjectMeta{Name: name}, r); err != nil {
		return fmt.Errorf("cluster: put %s/%s: %w", BucketBundles, name, err)
	}
	return nil
}

// GetBaseBundle copies a base bundle to w (agent side).
func GetBaseBundle(ctx context.Context, js jetstream.JetStream, name string, w io.Writer) error {
	return getObject(ctx, js, BucketBundles, name, w)
}

// PutResultBundle stores an agent's result bundle in its own bucket under
// ResultBundleName(l) and returns that name (agent side).
func PutResultBundle(ctx context.Context, js jetstream.JetStream, l Lease, r io.Reader) (string, error) {
	bucket := ResultsBucket(l.Agent)
	obs, err := js.ObjectStore(ctx, bucket)
	if err != nil {
		return "", fmt.Errorf("cluster: object store %s: %w", bucket, err)
	}
	name := ResultBundleName(l)
	if _, err := obs.Put(ctx, jetstream.ObjectMeta{Name: name}, r); err != nil {
		return "", fmt.Errorf("cluster: put %s/%s: %w", bucket, name, err)
	}
	return name, nil
}

// GetResultBundle copies agent's result bundle name to w (coordinator side).
func GetResultBundle(ctx context.Context, js jetstream.JetStream, agent, name string, w io.Writer) error {
	return getObject(ctx, js, ResultsBucket(agent), name, w)
}

func getObject(ctx context.Context, js jetstream.JetStream, bucket, name string, w io.Writer) error {
	obs, err := js.ObjectStore(ctx, bucket)
	if err != nil {
		return fmt.Errorf("cluster: object store %s: %w", bucket, err)
	}
	r, err := obs.Get(ctx, name)
	if err != nil {
		return fmt.Errorf("cluster: get %s/%s: %w", bucket, name, err)
	}
	defer r.Close()
	// The object reader checks size and digest at EOF.
	if _, err := io.Copy(w, r); err != nil {
		return fmt.Errorf("cluster: get %s/%s: %w", bucket, name, err)
	}
	return nil
}
