package cluster

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// serveTunnel runs the coordinator's end with handlerFor until the test ends.
func (r *rig) serveTunnel(t *testing.T, handlerFor HandlerFor) {
	t.Helper()
	c, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ServeTunnel(c, r.coord, handlerFor) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	if err := r.coord.Flush(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // the subscription reaches the server
}

// TestTunnelStreamsAnAnswer: a request larger than a NATS message reaches
// the coordinator's handler whole, with its method, path and headers and
// the agent and attempt its subject names; a streamed answer reaches the
// agent chunk by chunk as the handler flushes, before the handler ends.
func TestTunnelStreamsAnAnswer(t *testing.T) {
	r := newRig(t, ServerOptions{})
	a := r.addAgent(t, "agent1")
	second := make(chan struct{})
	big := bytes.Repeat([]byte("x"), 3*tunnelChunk+17)
	r.serveTunnel(t, func(agent, attempt string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			body, _ := io.ReadAll(req.Body)
			w.Header().Set("Content-Type", "text/event-stream")
			w.Header().Set("Request-Id", fmt.Sprintf("%s/%s %s %s %s %d", agent, attempt, req.Method, req.URL.RequestURI(), req.Header.Get("Anthropic-Version"), len(body)))
			fmt.Fprint(w, "event: one\n\n")
			w.(http.Flusher).Flush()
			<-second // the agent must have read the first event by now
			fmt.Fprint(w, "event: two\n\n")
		})
	})
	client := &http.Client{Transport: &Tunnel{NC: a.nc, Subject: APISubject("agent1", "T1-1"), HeadTimeout: 5 * time.Second}}
	req, _ := http.NewRequest("POST", "http://api.invalid/v1/messages?beta=true", bytes.NewReader(big))
	req.Header.Set("Anthropic-Version", "2023-06-01")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	want := fmt.Sprintf("agent1/T1-1 POST /v1/messages?beta=true 2023-06-01 %d", len(big))
	if resp.StatusCode != 200 || resp.Header.Get("Request-Id") != want || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d, headers %v; want 200 and %q", resp.StatusCode, resp.Header, want)
	}
	br := bufio.NewReader(resp.Body)
	first := make(chan string, 1)
	go func() {
		line, _ := br.ReadString('\n')
		first <- line
	}()
	select {
	case line := <-first:
		if line != "event: one\n" {
			t.Fatalf("first line %q", line)
		}
	case <-time.After(3 * time.Second):
		close(second)
		t.Fatal("the first event did not arrive before the handler ended: the answer is not streamed")
	}
	close(second)
	rest, err := io.ReadAll(br)
	if err != nil || string(rest) != "\nevent: two\n\n" {
		t.Fatalf("rest %q, %v", rest, err)
	}
}

// TestTunnelRefusals: an attempt the coordinator does not lease to the
// agent is answered 403 without reaching a handler, and an agent cannot
// send on another agent's subject at all (the server refuses the publish,
// so it cannot ask in that agent's name). The control is the agent's own
// subject for a leased attempt, which gets through.
func TestTunnelRefusals(t *testing.T) {
	r := newRig(t, ServerOptions{})
	a := r.addAgent(t, "agent1")
	r.addAgent(t, "agent2")
	r.serveTunnel(t, func(agent, attempt string) http.Handler {
		if agent != "agent1" || attempt != "T1-1" {
			return nil
		}
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "ok") })
	})
	get := func(c context.Context, subject string) (int, string, error) {
		client := &http.Client{Transport: &Tunnel{NC: a.nc, Subject: subject, HeadTimeout: 3 * time.Second}}
		req, _ := http.NewRequestWithContext(c, "POST", "http://x/v1/messages", strings.NewReader("{}"))
		resp, err := client.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), nil
	}
	if code, body, err := get(context.Background(), APISubject("agent1", "T1-1")); err != nil || code != 200 || body != "ok" {
		t.Fatalf("control: %d %q %v", code, body, err)
	}
	if code, body, err := get(context.Background(), APISubject("agent1", "T2-1")); err != nil || code != 403 || !strings.Contains(body, "not leased to agent agent1") {
		t.Fatalf("an attempt not leased: %d %q %v", code, body, err)
	}
	a.expectDenied(t, "zerg.api.agent2", func(c context.Context) error {
		_, _, err := get(c, APISubject("agent2", "T1-1"))
		return err
	})
}
