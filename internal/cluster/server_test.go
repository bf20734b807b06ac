package cluster

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

func TestServerStartsQuickly(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	start := time.Now()
	srv, err := StartServer(ServerOptions{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("server start (fresh store, with auth file): %v", time.Since(start))
	defer srv.Shutdown()
	if !strings.HasPrefix(srv.ClientURL(), "nats://127.0.0.1:") {
		t.Fatalf("ClientURL %q", srv.ClientURL())
	}
	if _, err := StartServer(ServerOptions{Dir: t.TempDir(), Host: "0.0.0.0"}); err == nil {
		t.Fatal("listening on 0.0.0.0 without TLS was allowed")
	}
	fi, err := os.Stat(filepath.Join(dir, "auth.json"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("auth.json: %v %v", fi.Mode(), err)
	}
	// One server per store dir, also within one process.
	if s2, err := StartServer(ServerOptions{Dir: dir}); err == nil {
		s2.Shutdown()
		t.Fatal("a second server started on the same store dir")
	} else if !strings.Contains(err.Error(), "in use") {
		t.Fatalf("second server: %v", err)
	}
	srv.Shutdown()
	s3, err := StartServer(ServerOptions{Dir: dir})
	if err != nil {
		t.Fatalf("restart after Shutdown: %v", err)
	}
	s3.Shutdown()
}

func TestWrongPasswordRefused(t *testing.T) {
	t.Parallel()
	r := newRig(t, ServerOptions{})
	c, err := r.srv.AddAgent("a")
	if err != nil {
		t.Fatal(err)
	}
	bad := c
	bad.Password = c.Password[:len(c.Password)-1] + "x"
	if c.Password[len(c.Password)-1] == 'x' {
		bad.Password = c.Password[:len(c.Password)-1] + "y"
	}
	if nc, err := Connect(ctx(t), bad); err == nil {
		nc.Close()
		t.Fatal("a wrong password was accepted")
	} else if !strings.Contains(strings.ToLower(err.Error()), "authorization") {
		t.Fatalf("err = %v, want an authorization error", err)
	}
	unknown := c
	unknown.User = "nobody"
	if nc, err := Connect(ctx(t), unknown); err == nil {
		nc.Close()
		t.Fatal("an unknown user was accepted")
	}
	nc, err := Connect(ctx(t), c)
	if err != nil {
		t.Fatalf("right password: %v", err)
	}
	nc.Close()
}

func TestRotateAndRemoveAgent(t *testing.T) {
	t.Parallel()
	r := newRig(t, ServerOptions{})
	old, err := r.srv.AddAgent("a")
	if err != nil {
		t.Fatal(err)
	}
	closed := make(chan struct{})
	nc, err := Connect(ctx(t), old, nats.NoReconnect(), nats.ClosedHandler(func(*nats.Conn) { close(closed) }))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	rotated, err := r.srv.AddAgent("a")
	if err != nil {
		t.Fatal(err)
	}
	if rotated.Password == old.Password {
		t.Fatal("AddAgent did not rotate the password")
	}
	select {
	case <-closed:
	case <-time.After(3 * time.Second):
		t.Fatal("a connection with the old password survived the rotation")
	}
	if nc, err := Connect(ctx(t), old); err == nil {
		nc.Close()
		t.Fatal("the old password still works")
	}
	nc2, err := Connect(ctx(t), rotated)
	if err != nil {
		t.Fatalf("rotated password: %v", err)
	}
	nc2.Close()
	if err := r.srv.RemoveAgent("a"); err != nil {
		t.Fatal(err)
	}
	if nc, err := Connect(ctx(t), rotated); err == nil {
		nc.Close()
		t.Fatal("a removed agent can connect")
	}
	if got := r.srv.Agents(); len(got) != 0 {
		t.Fatalf("Agents() = %v", got)
	}
	for _, bad := range []string{"zerg", "a.b", "a*", "", "-x", "a b"} {
		if _, err := r.srv.AddAgent(bad); err == nil {
			t.Errorf("AddAgent(%q) accepted", bad)
		}
	}
}

func TestAgentPermissions(t *testing.T) {
	t.Parallel()
	r := newRig(t, ServerOptions{})
	a, b := r.addAgent(t, "a"), r.addAgent(t, "b")
	d := r.serve(t, DispatchConfig{})
	att := enqueue(d, "p")

	// B produces a result bundle that A must not reach.
	clB := claim(t, b, 3*time.Second)
	bName, err := PutResultBundle(ctx(t), b.js, clB.Lease, strings.NewReader("b's work"))
	if err != nil {
		t.Fatal(err)
	}
	forged := Lease{AttemptID: att.ID, Agent: "b", Delivery: 1}

	a.expectDenied(t, "zerg.result.b.", func(c context.Context) error {
		return PublishResult(c, a.js, &Result{Lease: forged})
	})
	a.expectDenied(t, "$KV.zerg_agents.b", func(c context.Context) error {
		_, err := StartHeartbeat(c, a.js, "b", 0, func() Heartbeat { return Heartbeat{} })
		return err
	})
	a.expectDenied(t, "$JS.API.STREAM.DELETE.ZERG_RESULTS", func(c context.Context) error {
		return a.js.DeleteStream(c, StreamResults)
	})
	for _, s := range []string{StreamResults, "OBJ_" + BucketBundles, "KV_" + BucketAgents} {
		a.expectDenied(t, "$JS.API.STREAM.PURGE."+s, func(c context.Context) error {
			_, err := a.nc.RequestWithContext(c, "$JS.API.STREAM.PURGE."+s, []byte(`{}`))
			return err
		})
	}
	a.expectDenied(t, "$JS.API.CONSUMER.DELETE.ZERG_RESULTS.coordinator", func(c context.Context) error {
		return a.js.DeleteConsumer(c, StreamResults, ResultsConsumer)
	})
	a.expectDenied(t, "$JS.API.CONSUMER.CREATE.ZERG_RESULTS", func(c context.Context) error {
		_, err := a.js.CreateOrUpdateConsumer(c, StreamResults, jetstream.ConsumerConfig{Durable: "mine", AckPolicy: jetstream.AckExplicitPolicy})
		return err
	})
	// Claiming or giving back in another agent's name: the coordinator
	// would hand b's attempts to a, or let a drop them.
	a.expectDenied(t, "zerg.claim.b", func(c context.Context) error {
		_, err := Claim(c, a.nc, "b", Capabilities{}, nil)
		return err
	})
	a.expectDenied(t, "zerg.giveback.b.", func(c context.Context) error {
		return (&Claimed{Attempt: att, Lease: clB.Lease, nc: a.nc}).GiveBack(c, false, 0, "")
	})
	// Reading B's result bundle: binding the bucket, and a raw direct get.
	a.expectDenied(t, "OBJ_zerg_results_b", func(c context.Context) error {
		return GetResultBundle(c, a.js, "b", bName, &bytes.Buffer{})
	})
	a.expectDenied(t, "$JS.API.DIRECT.GET.OBJ_zerg_results_b", func(c context.Context) error {
		_, err := a.nc.RequestWithContext(c, "$JS.API.DIRECT.GET.OBJ_zerg_results_b.$O.zerg_results_b.M.>", nil)
		return err
	})
	// Writing B's bucket or the base bundles.
	a.expectDenied(t, "$O.zerg_results_b.", func(c context.Context) error {
		_, err := a.js.Publish(c, "$O.zerg_results_b.C.x", []byte("junk"))
		return err
	})
	a.expectDenied(t, "$O.zerg_bundles.", func(c context.Context) error {
		_, err := a.js.Publish(c, "$O.zerg_bundles.M.eA==", []byte("{}"))
		return err
	})
	// The coordinator's leases.
	a.expectDenied(t, "KV_zerg_leases", func(c context.Context) error {
		_, err := a.js.KeyValue(c, BucketLeases)
		return err
	})
	// Eavesdropping: results, other inboxes, advisories.
	// Answering claims (a fake coordinator handing out attempts of its
	// own) needs the claims: refused too.
	for _, subj := range []string{"zerg.result.>", "zerg.claim.>", "zerg.giveback.>", "zerg.api.>", "_INBOX_b.>", "_INBOX.>", "$JS.EVENT.>"} {
		a.expectDenied(t, subj, func(c context.Context) error {
			sub, err := a.nc.SubscribeSync(subj)
			if err != nil {
				return err
			}
			_, err = sub.NextMsgWithContext(c)
			return err
		})
	}

	// What A may do still works after all those refusals.
	if _, err := StartHeartbeat(ctx(t), a.js, "a", time.Hour, func() Heartbeat { return Heartbeat{} }); err != nil {
		t.Errorf("own heartbeat: %v", err)
	}
	if err := PublishResult(ctx(t), b.js, &Result{Lease: clB.Lease, Bundle: bName}); err != nil {
		t.Errorf("own result: %v", err)
	}
	if err := clB.GiveBack(ctx(t), false, 0, "done with it"); err != nil {
		t.Errorf("own give-back: %v", err)
	}
}

func TestTLS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := newRig(t, ServerOptions{Dir: dir, TLS: true})
	url := r.srv.ClientURL()
	if !strings.HasPrefix(url, "tls://127.0.0.1:") {
		t.Fatalf("ClientURL %q", url)
	}
	c, err := r.srv.AddAgent("a")
	if err != nil {
		t.Fatal(err)
	}
	if c.CA == "" || c.CA != r.srv.CA() {
		t.Fatal("agent credentials lack the CA")
	}
	// Without the CA, the client verifies against the system roots and
	// rejects the private CA's certificate.
	noCA := []nats.Option{nats.UserInfo(c.User, c.Password), nats.Timeout(2 * time.Second), nats.Secure(&tls.Config{MinVersion: tls.VersionTLS12})}
	if nc, err := nats.Connect(url, noCA...); err == nil {
		nc.Close()
		t.Fatal("connected without the CA")
	} else if !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("without the CA: %v, want a certificate error", err)
	}
	// Another CA does not do either.
	other := newRig(t, ServerOptions{TLS: true})
	wrong := c
	wrong.CA = other.srv.CA()
	if nc, err := Connect(ctx(t), wrong); err == nil {
		nc.Close()
		t.Fatal("connected with another CA")
	}
	// Plain text is refused.
	plain := c
	plain.URL, plain.CA = strings.Replace(url, "tls://", "nats://", 1), ""
	if nc, err := Connect(ctx(t), plain); err == nil {
		nc.Close()
		t.Fatal("connected without TLS")
	}
	nc, err := Connect(ctx(t), c)
	if err != nil {
		t.Fatalf("with the CA: %v", err)
	}
	if !nc.TLSRequired() {
		t.Fatal("connection is not TLS")
	}
	nc.Close()

	for _, f := range []string{caKeyFile, serverKeyFile} {
		fi, err := os.Stat(filepath.Join(dir, "tls", f))
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v %v", f, fi.Mode(), err)
		}
	}
	// The CA is kept across restarts: issued credentials stay valid.
	ca := r.srv.CA()
	r.srv.Shutdown()
	srv2, err := StartServer(ServerOptions{Dir: dir, TLS: true})
	if err != nil {
		t.Fatal(err)
	}
	defer srv2.Shutdown()
	if srv2.CA() != ca {
		t.Fatal("restart generated a new CA")
	}
	c.URL = srv2.ClientURL()
	nc, err = Connect(ctx(t), c)
	if err != nil {
		t.Fatalf("after restart: %v", err)
	}
	nc.Close()
}

func TestTLSNamesReissueServerCert(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv, err := StartServer(ServerOptions{Dir: dir, TLS: true})
	if err != nil {
		t.Fatal(err)
	}
	ca := srv.CA()
	srv.Shutdown()
	srv, err = StartServer(ServerOptions{Dir: dir, TLS: true, TLSNames: []string{"coordinator.example", "10.1.2.3"}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	if srv.CA() != ca {
		t.Fatal("new names replaced the CA")
	}
	pair, err := tls.LoadX509KeyPair(filepath.Join(dir, "tls", serverCertFile), filepath.Join(dir, "tls", serverKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM([]byte(ca))
	for _, n := range []string{"coordinator.example", "10.1.2.3", "127.0.0.1", "localhost"} {
		if _, err := pair.Leaf.Verify(x509.VerifyOptions{DNSName: n, Roots: pool}); err != nil {
			t.Errorf("certificate for %s: %v", n, err)
		}
	}
}

func TestRestartKeepsCredentials(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := newRig(t, ServerOptions{Dir: dir})
	c, err := r.srv.AddAgent("a")
	if err != nil {
		t.Fatal(err)
	}
	credsPath := filepath.Join(t.TempDir(), "agent.json")
	if err := c.WriteCreds(credsPath); err != nil {
		t.Fatal(err)
	}
	coordPW := r.srv.CoordinatorCreds().Password
	r.coord.Close()
	r.srv.Shutdown()

	start := time.Now()
	srv, err := StartServer(ServerOptions{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("server restart on a store with streams: %v", time.Since(start))
	defer srv.Shutdown()
	if srv.CoordinatorCreds().Password != coordPW {
		t.Fatal("the coordinator's password changed")
	}
	if got := srv.Agents(); len(got) != 1 || got[0] != "a" {
		t.Fatalf("Agents() = %v", got)
	}
	// The coordinator ensures the streams again on every start.
	coord, js := connectJS(t, srv.CoordinatorCreds())
	if err := EnsureStreams(ctx(t), js, testStreams); err != nil {
		t.Fatalf("EnsureStreams again: %v", err)
	}
	d := NewDispatcher(DispatchConfig{})
	stop, err := ServeDispatch(coord, d, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	att := enqueue(d, "one")
	c2, err := ReadCreds(credsPath)
	if err != nil {
		t.Fatal(err)
	}
	c2.URL = srv.ClientURL() // the port was chosen anew
	ag := connectAgent(t, "a", c2)
	if cl := claim(t, ag, 10*time.Second); cl.Attempt.ID != att.ID {
		t.Fatalf("claimed %s, want %s", cl.Attempt.ID, att.ID)
	}
}
