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
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// StreamsConfig tunes EnsureStreams. Zero fields take the defaults below.
type StreamsConfig struct {
	// AckWait is how long a claimed attempt may go without an ack or an
	// InProgress before JetStream delivers it again (default 60s). Claim
	// sends InProgress every AckWait/3.
	AckWait time.Duration
	// MaxDeliver bounds deliveries of one attempt (default 5); after that
	// JetStream publishes a MAX_DELIVERIES advisory (see WatchDeadLetters).
	MaxDeliver int
	// HeartbeatTTL is how long an agent's heartbeat key lives without a
	// new put (default 5s; agents put every second).
	HeartbeatTTL time.Duration
	// DuplicateWindow is how long Nats-Msg-Id de-duplication remembers an
	// id, for attempts and results (default 10 minutes).
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

// ResultsConsumer is the coordinator's durable pull consumer of StreamResults.
const ResultsConsumer = "coordinator"

// EnsureStreams creates (or updates to cfg) the streams, consumers and
// buckets of the protocol. The coordinator calls it after StartServer.
func EnsureStreams(ctx context.Context, js jetstream.JetStream, cfg StreamsConfig) error {
	cfg = cfg.withDefaults()
	if _, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:        StreamAttempts,
		Description: "zerg: attempts waiting for an agent",
		Subjects:    []string{SubjectAttempts + ".>"},
		Retention:   jetstream.WorkQueuePolicy, // an acked attempt is gone
		Storage:     jetstream.FileStorage,
		Duplicates:  cfg.DuplicateWindow, // Enqueue is idempotent by attempt id
	}); err != nil {
		return fmt.Errorf("cluster: stream %s: %w", StreamAttempts, err)
	}
	if _, err := js.CreateOrUpdateConsumer(ctx, StreamAttempts, jetstream.ConsumerConfig{
		Durable:       AttemptsConsumer,
		Description:   "zerg: the agents' shared pull consumer",
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       cfg.AckWait,
		MaxDeliver:    cfg.MaxDeliver,
		FilterSubject: SubjectAttempts + ".>",
		// One outstanding attempt per pull: a claimed attempt's AckWait
		// only starts when someone is ready to run it.
		MaxRequestBatch: 1,
	}); err != nil {
		return fmt.Errorf("cluster: consumer %s: %w", AttemptsConsumer, err)
	}
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

// Attempt is one run of a task, as queued for agents.
type Attempt struct {
	// ID is unique per attempt: task, attempt number and a random nonce
	// (NewAttemptID). It is the message's subject token and dedupe id.
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

// Enqueue queues a for agents. Enqueueing the same attempt id again within
// the duplicate window is a no-op and reports duplicate.
func Enqueue(ctx context.Context, js jetstream.JetStream, a Attempt) (duplicate bool, err error) {
	if !tokenRe.MatchString(a.ID) {
		return false, fmt.Errorf("cluster: invalid attempt id %q", a.ID)
	}
	if a.Enqueued.IsZero() {
		a.Enqueued = time.Now().UTC()
	}
	b, err := json.Marshal(a)
	if err != nil {
		return false, err
	}
	ack, err := js.Publish(ctx, SubjectAttempts+"."+a.ID, b, jetstream.WithMsgID(a.ID), jetstream.WithExpectStream(StreamAttempts))
	if err != nil {
		return false, fmt.Errorf("cluster: enqueue %s: %w", a.ID, err)
	}
	return ack.Duplicate, nil
}

// AttemptsConsumerFor binds the agents' consumer (agent side).
func AttemptsConsumerFor(ctx context.Context, js jetstream.JetStream) (jetstream.Consumer, error) {
	c, err := js.Consumer(ctx, StreamAttempts, AttemptsConsumer)
	if err != nil {
		return nil, fmt.Errorf("cluster: bind consumer %s.%s: %w", StreamAttempts, AttemptsConsumer, err)
	}
	return c, nil
}

// WaitAttemptsConsumer is AttemptsConsumerFor that waits, trying again
// every interval until ctx ends, while the queue does not exist yet: a
// server zerg does not embed is up, and its agents join, before any
// coordinator has created the streams (docs/cluster.md). waiting, if set, is
// called once, with the first error, when it has to wait. Other errors
// (permissions, a lost connection) end it at once.
func WaitAttemptsConsumer(ctx context.Context, js jetstream.JetStream, every time.Duration, waiting func(error)) (jetstream.Consumer, error) {
	for first := true; ; first = false {
		c, err := AttemptsConsumerFor(ctx, js)
		if err == nil || !(errors.Is(err, jetstream.ErrStreamNotFound) || errors.Is(err, jetstream.ErrConsumerNotFound)) {
			return c, err
		}
		if first && waiting != nil {
			waiting(err)
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(every):
		}
	}
}

// ErrBadAttempt is returned by Claim for a message that is not an attempt.
// The message has been terminated (it will not come back); call Claim again.
var ErrBadAttempt = errors.New("cluster: malformed attempt")

// Claimed is an attempt this agent holds. While held, a goroutine tells
// JetStream every AckWait/3 that it is in progress. End it with Done, Fail
// or Abandon.
type Claimed struct {
	Attempt Attempt
	Lease   Lease

	msg      jetstream.Msg
	stop     chan struct{}
	stopped  chan struct{}
	stopOnce sync.Once
	// keepAliveErr is the last InProgress error, if any.
	mu           sync.Mutex
	keepAliveErr error
}

// Claim waits until an attempt is available (or ctx ends) and claims it for
// agent. It pulls one message at a time (Fetch(1)), so no attempt waits in
// a local buffer with its AckWait running.
func Claim(ctx context.Context, cons jetstream.Consumer, agent string) (*Claimed, error) {
	ackWait := cons.CachedInfo().Config.AckWait
	if ackWait <= 0 {
		ackWait = 30 * time.Second // the server's default
	}
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// Each pull request lives at most 5s (or until ctx ends), so a
		// cancelled Claim leaves no long-lived request on the server that
		// could be handed an attempt nobody reads.
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		msg, err := cons.Next(jetstream.FetchContext(pctx))
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if errors.Is(err, nats.ErrTimeout) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, jetstream.ErrNoMessages) {
				continue
			}
			return nil, fmt.Errorf("cluster: claim: %w", err)
		}
		meta, err := msg.Metadata()
		if err != nil {
			_ = msg.Term()
			return nil, fmt.Errorf("%w: %v", ErrBadAttempt, err)
		}
		var a Attempt
		if err := json.Unmarshal(msg.Data(), &a); err != nil || a.ID == "" || msg.Subject() != SubjectAttempts+"."+a.ID {
			_ = msg.TermWithReason("malformed attempt")
			return nil, fmt.Errorf("%w: subject %s", ErrBadAttempt, msg.Subject())
		}
		c := &Claimed{
			Attempt: a,
			Lease:   Lease{AttemptID: a.ID, Agent: agent, Delivery: meta.NumDelivered},
			msg:     msg,
			stop:    make(chan struct{}),
			stopped: make(chan struct{}),
		}
		go c.keepAlive(ackWait / 3)
		return c, nil
	}
}

func (c *Claimed) keepAlive(every time.Duration) {
	defer close(c.stopped)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
			if err := c.msg.InProgress(); err != nil {
				c.mu.Lock()
				c.keepAliveErr = err
				c.mu.Unlock()
			}
		}
	}
}

func (c *Claimed) halt() {
	c.stopOnce.Do(func() { close(c.stop) })
	<-c.stopped
}

// Done acknowledges the attempt (after its result was published) and waits
// for the server to confirm, so a successful Done means the attempt will not
// be delivered again.
func (c *Claimed) Done(ctx context.Context) error {
	c.halt()
	if err := c.msg.DoubleAck(ctx); err != nil {
		return fmt.Errorf("cluster: ack %s: %w", c.Attempt.ID, err)
	}
	return nil
}

// Fail gives the attempt back: with retry it is delivered again (after
// delay, if any), counting towards MaxDeliver; without it is terminated and
// never delivered again.
func (c *Claimed) Fail(retry bool, delay time.Duration) error {
	c.halt()
	var err error
	switch {
	case !retry:
		err = c.msg.Term()
	case delay > 0:
		err = c.msg.NakWithDelay(delay)
	default:
		err = c.msg.Nak()
	}
	if err != nil {
		return fmt.Errorf("cluster: fail %s: %w", c.Attempt.ID, err)
	}
	return nil
}

// Abandon stops the keep-alive without answering: JetStream delivers the
// attempt again once AckWait has passed, as it would after a crash.
func (c *Claimed) Abandon() { c.halt() }

// KeepAliveErr is the last error from sending InProgress, if any.
func (c *Claimed) KeepAliveErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.keepAliveErr
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

// DeadLetter is an attempt that reached MaxDeliver without being acked.
type DeadLetter struct {
	Attempt    Attempt
	Deliveries uint64
	StreamSeq  uint64
	// Err is set when the attempt could not be read back from the stream
	// (Attempt is then zero apart from nothing known).
	Err error
}

// maxDeliveriesAdvisory is the part of JetStream's
// io.nats.jetstream.advisory.v1.max_deliver event used here.
type maxDeliveriesAdvisory struct {
	Stream     string `json:"stream"`
	Consumer   string `json:"consumer"`
	StreamSeq  uint64 `json:"stream_seq"`
	Deliveries uint64 `json:"deliveries"`
}

// WatchDeadLetters calls fn for each attempt that reaches MaxDeliver, then
// removes that attempt from the work queue (where it would otherwise stay,
// undeliverable). Coordinator side; stop with the returned subscription's
// Unsubscribe.
func WatchDeadLetters(nc *nats.Conn, js jetstream.JetStream, fn func(DeadLetter)) (*nats.Subscription, error) {
	subj := "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES." + StreamAttempts + "." + AttemptsConsumer
	return nc.Subscribe(subj, func(m *nats.Msg) {
		var adv maxDeliveriesAdvisory
		if err := json.Unmarshal(m.Data, &adv); err != nil {
			fn(DeadLetter{Err: fmt.Errorf("cluster: advisory: %w", err)})
			return
		}
		dl := DeadLetter{Deliveries: adv.Deliveries, StreamSeq: adv.StreamSeq}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s, err := js.Stream(ctx, StreamAttempts)
		if err == nil {
			var raw *jetstream.RawStreamMsg
			if raw, err = s.GetMsg(ctx, adv.StreamSeq); err == nil {
				err = json.Unmarshal(raw.Data, &dl.Attempt)
			}
		}
		dl.Err = err
		fn(dl)
		if s != nil {
			_ = s.DeleteMsg(ctx, adv.StreamSeq)
		}
	})
}
