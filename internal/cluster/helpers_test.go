package cluster

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// testStreams are short settings so redelivery and expiry happen within a
// test's budget.
var testStreams = StreamsConfig{AckWait: time.Second, MaxDeliver: 3, HeartbeatTTL: time.Second}

type rig struct {
	srv   *Server
	coord *nats.Conn
	js    jetstream.JetStream
}

// newRig starts a server in a temp dir, connects the coordinator and
// ensures the streams.
func newRig(t *testing.T, o ServerOptions) *rig {
	t.Helper()
	if o.Dir == "" {
		o.Dir = t.TempDir()
	}
	srv, err := StartServer(o)
	if err != nil {
		t.Fatalf("StartServer: %v", err)
	}
	t.Cleanup(srv.Shutdown)
	r := &rig{srv: srv}
	r.coord, r.js = connectJS(t, srv.CoordinatorCreds())
	if err := EnsureStreams(ctx(t), r.js, testStreams); err != nil {
		t.Fatalf("EnsureStreams: %v", err)
	}
	return r
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

func connectJS(t *testing.T, c Creds, opts ...nats.Option) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	nc, err := Connect(ctx(t), c, opts...)
	if err != nil {
		t.Fatalf("Connect(%s): %v", c.User, err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return nc, js
}

// agent is an agent's connection plus the permission violations the server
// reported on it.
type agent struct {
	name   string
	creds  Creds
	nc     *nats.Conn
	js     jetstream.JetStream
	denied chan error
}

func (r *rig) addAgent(t *testing.T, name string) *agent {
	t.Helper()
	c, err := r.srv.AddAgent(name)
	if err != nil {
		t.Fatalf("AddAgent(%s): %v", name, err)
	}
	if err := EnsureAgentStore(ctx(t), r.js, name); err != nil {
		t.Fatal(err)
	}
	return connectAgent(t, name, c)
}

func connectAgent(t *testing.T, name string, c Creds) *agent {
	t.Helper()
	a := &agent{name: name, creds: c, denied: make(chan error, 16)}
	a.nc, a.js = connectJS(t, c, nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		if IsPermissionError(err) {
			select {
			case a.denied <- err:
			default:
			}
		}
	}))
	return a
}

// expectDenied runs op and requires the server to report a permission
// violation mentioning fragment, and op to fail. The server refuses silently
// (the request just gets no reply), so op's context is cancelled as soon as
// the violation arrives.
func (a *agent) expectDenied(t *testing.T, fragment string, op func(context.Context) error) {
	t.Helper()
	for len(a.denied) > 0 {
		<-a.denied
	}
	c, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- op(c) }()
	select {
	case err := <-a.denied:
		if !strings.Contains(err.Error(), fragment) {
			t.Errorf("violation %q does not mention %q", err, fragment)
		}
		cancel()
		if err := <-done; err == nil {
			t.Errorf("%s: operation succeeded despite the violation", fragment)
		}
	case err := <-done:
		t.Errorf("%s: expected a permissions violation, operation returned %v", fragment, err)
	case <-c.Done():
		t.Errorf("%s: no permissions violation reported", fragment)
	}
}

// serve answers the agents' claims from a dispatcher on the coordinator's
// connection.
func (r *rig) serve(t *testing.T, cfg DispatchConfig) *Dispatcher {
	t.Helper()
	d := NewDispatcher(cfg)
	stop, err := ServeDispatch(r.coord, d, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return d
}

func claim(t *testing.T, a *agent, within time.Duration) *Claimed {
	t.Helper()
	c, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	cl, err := Claim(c, a.nc, a.name, Capabilities{Mode: "subprocess"}, nil)
	if err != nil {
		t.Fatalf("%s: Claim: %v", a.name, err)
	}
	return cl
}

func enqueue(d *Dispatcher, task string) Attempt {
	a := Attempt{ID: NewAttemptID(task, 1), Task: task, Number: 1, Base: "0123abcd", BaseBundle: "base-" + task, Spec: []byte(`{"prompt":"x"}`)}
	d.Enqueue(a, Capabilities{Mode: "subprocess"}, Deadlines{}, 0, time.Now())
	return a
}

// nextResult fetches one result from the coordinator's results consumer.
func (r *rig) nextResult(t *testing.T) Result {
	t.Helper()
	cons, err := r.js.Consumer(ctx(t), StreamResults, ResultsConsumer)
	if err != nil {
		t.Fatal(err)
	}
	m, err := cons.Next(jetstream.FetchMaxWait(3 * time.Second))
	if err != nil {
		t.Fatalf("next result: %v", err)
	}
	res, err := ParseResult(m.Subject(), m.Data())
	if err != nil {
		t.Fatalf("ParseResult: %v", err)
	}
	if err := m.Ack(); err != nil {
		t.Fatal(err)
	}
	return res
}
