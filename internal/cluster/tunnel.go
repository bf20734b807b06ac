package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
)

// The API tunnel: an agent's workers reach the Messages API through the
// coordinator, so the key, the gateway's policy, cost and the audit record
// stay on the coordinator's host. An HTTP request goes over NATS as one or
// more messages on zerg.api.<agent>.<attempt> (the server lets an agent
// publish only below its own name, so the coordinator knows who asks); the
// response comes back on the agent's own inbox as a head (status and
// headers), body chunks as the handler writes and flushes them (a
// streamed answer arrives as it is made), and an end.
//
// Core NATS delivers in order between one publisher and one subscriber and
// this protocol adds sequence numbers, so a lost or reordered message is
// detected and fails the request rather than corrupting it.

// SubjectAPI prefixes tunnel subjects: zerg.api.<agent>.<attempt id>.
const SubjectAPI = "zerg.api"

// tunnelChunk bounds one message's payload, well under the server's
// MaxPayload.
const tunnelChunk = 512 << 10

// Tunnel headers.
const (
	hdrID     = "Zerg-Req"     // the request's id, chosen by the agent
	hdrSeq    = "Zerg-Seq"     // the message's number within its request or response
	hdrLast   = "Zerg-Last"    // "1": the request's last message
	hdrMethod = "Zerg-Method"  // the request's method (first message)
	hdrURI    = "Zerg-URI"     // its path and query (first message)
	hdrKind   = "Zerg-Kind"    // a response message: head, body, end or error
	hdrStatus = "Zerg-Status"  // the response's status (head)
	hdrPrefix = "Zerg-Header-" // one HTTP header (name after the prefix)
)

// APISubject is the tunnel subject of agent's attempt.
func APISubject(agent, attemptID string) string {
	return SubjectAPI + "." + agent + "." + attemptID
}

// Tunnel is the agent's end: an http.RoundTripper that sends each request
// over NATS on one attempt's subject. Its URL's scheme and host are
// ignored: where the request goes is the coordinator's decision.
type Tunnel struct {
	NC      *nats.Conn
	Subject string
	// HeadTimeout bounds the wait for the response's head (default 10
	// minutes: the API may take that long to start an answer).
	HeadTimeout time.Duration
}

func (t *Tunnel) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		_ = req.Body.Close() // read to the end already; ReadAll's error is the one that matters
		if err != nil {
			return nil, err
		}
		body = b
	}
	id := randomHex(8)
	inbox := t.NC.NewRespInbox()
	msgs := make(chan *nats.Msg, 256)
	sub, err := t.NC.ChanSubscribe(inbox, msgs)
	if err != nil {
		return nil, fmt.Errorf("tunnel: %w", err)
	}
	// The subscription must reach the server before the coordinator
	// answers.
	if err := t.NC.Flush(); err != nil {
		sub.Unsubscribe()
		return nil, fmt.Errorf("tunnel: %w", err)
	}
	for seq, off := 0, 0; ; seq++ {
		end := min(off+tunnelChunk, len(body))
		m := nats.NewMsg(t.Subject)
		m.Header.Set(hdrID, id)
		m.Header.Set(hdrSeq, strconv.Itoa(seq))
		if seq == 0 {
			m.Header.Set(hdrMethod, req.Method)
			m.Header.Set(hdrURI, req.URL.RequestURI())
			for k, vs := range req.Header {
				for _, v := range vs {
					m.Header.Add(hdrPrefix+k, v)
				}
			}
		}
		m.Data = body[off:end]
		if end == len(body) {
			m.Header.Set(hdrLast, "1")
			m.Reply = inbox
		}
		if err := t.NC.PublishMsg(m); err != nil {
			sub.Unsubscribe()
			return nil, fmt.Errorf("tunnel: send the request: %w", err)
		}
		off = end
		if end == len(body) {
			break
		}
	}
	wait := t.HeadTimeout
	if wait <= 0 {
		wait = 10 * time.Minute
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case m := <-msgs:
		if err := expect(m, 0); err != nil {
			sub.Unsubscribe()
			return nil, err
		}
		status, err := strconv.Atoi(m.Header.Get(hdrStatus))
		if m.Header.Get(hdrKind) != "head" || err != nil {
			sub.Unsubscribe()
			return nil, fmt.Errorf("tunnel: the answer did not start with a head: %s", m.Header.Get(hdrKind))
		}
		resp := &http.Response{StatusCode: status, Status: fmt.Sprintf("%d %s", status, http.StatusText(status)),
			Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: http.Header{}, Request: req, ContentLength: -1}
		for k, vs := range m.Header {
			if name, ok := strings.CutPrefix(k, hdrPrefix); ok {
				for _, v := range vs {
					resp.Header.Add(name, v)
				}
			}
		}
		pr, pw := io.Pipe()
		resp.Body = &tunnelBody{PipeReader: pr, stop: func() { sub.Unsubscribe() }}
		go feed(req.Context(), msgs, sub, pw)
		return resp, nil
	case <-timer.C:
		sub.Unsubscribe()
		return nil, fmt.Errorf("tunnel: no answer within %s", wait)
	case <-req.Context().Done():
		sub.Unsubscribe()
		return nil, req.Context().Err()
	}
}

// feed copies the body chunks into pw until the end, an error, a gap in
// the sequence or the request's end.
func feed(ctx context.Context, msgs <-chan *nats.Msg, sub *nats.Subscription, pw *io.PipeWriter) {
	defer sub.Unsubscribe()
	for seq := 1; ; seq++ {
		var m *nats.Msg
		select {
		case m = <-msgs:
		case <-ctx.Done():
			pw.CloseWithError(ctx.Err())
			return
		}
		if err := expect(m, seq); err != nil {
			pw.CloseWithError(err)
			return
		}
		switch m.Header.Get(hdrKind) {
		case "body":
			if _, err := pw.Write(m.Data); err != nil {
				return // the reader went away
			}
		case "end":
			pw.Close()
			return
		case "error":
			pw.CloseWithError(fmt.Errorf("tunnel: %s", m.Data))
			return
		default:
			pw.CloseWithError(fmt.Errorf("tunnel: unexpected %q message", m.Header.Get(hdrKind)))
			return
		}
	}
}

func expect(m *nats.Msg, seq int) error {
	got := m.Header.Get(hdrSeq)
	if got == "" {
		// Not one of the coordinator's: the server's own status message,
		// such as 503 no responders while the coordinator is away.
		return fmt.Errorf("tunnel: the server answered status %q %q where message %d of the answer was due (the coordinator's end is not there)",
			m.Header.Get("Status"), m.Header.Get("Description"), seq)
	}
	if got != strconv.Itoa(seq) {
		return fmt.Errorf("tunnel: message %s of the answer arrived where %d was due (a message was lost)", got, seq)
	}
	return nil
}

// tunnelBody stops the subscription when the body is closed early.
type tunnelBody struct {
	*io.PipeReader
	stop func()
}

func (b *tunnelBody) Close() error {
	b.stop()
	return b.PipeReader.Close()
}

// Handler answers one tunnelled request of agent's attempt. It returns nil
// when the attempt is not leased to agent: the request is refused (403)
// without reaching anything.
type HandlerFor func(agent, attemptID string) http.Handler

// ServeTunnel is the coordinator's end: it answers the requests of every
// agent with the handler handlerFor gives for the agent and attempt the
// subject names (the server guarantees an agent publishes only below its
// own name). It returns when ctx ends.
func ServeTunnel(ctx context.Context, nc *nats.Conn, handlerFor HandlerFor) error {
	var mu sync.Mutex
	pending := map[string]*pendingRequest{} // by agent + request id
	sub, err := nc.Subscribe(SubjectAPI+".*.*", func(m *nats.Msg) {
		parts := strings.Split(m.Subject, ".")
		agent, attemptID := parts[2], parts[3]
		key := agent + "/" + m.Header.Get(hdrID)
		seq, _ := strconv.Atoi(m.Header.Get(hdrSeq))
		mu.Lock()
		p := pending[key]
		if seq == 0 {
			p = &pendingRequest{method: m.Header.Get(hdrMethod), uri: m.Header.Get(hdrURI), header: http.Header{}}
			for k, vs := range m.Header {
				if name, ok := strings.CutPrefix(k, hdrPrefix); ok {
					p.header[name] = append(p.header[name], vs...)
				}
			}
			pending[key] = p
		}
		if p == nil || seq != p.next {
			delete(pending, key)
			mu.Unlock()
			return // out of order: the agent's request times out
		}
		p.next++
		p.body.Write(m.Data)
		last := m.Header.Get(hdrLast) == "1"
		if last {
			delete(pending, key)
		}
		mu.Unlock()
		if last && m.Reply != "" {
			go serveOne(ctx, nc, m.Reply, agent, attemptID, p, handlerFor)
		}
	})
	if err != nil {
		return fmt.Errorf("tunnel: %w", err)
	}
	defer sub.Unsubscribe()
	<-ctx.Done()
	return nil
}

type pendingRequest struct {
	method, uri string
	header      http.Header
	body        bytes.Buffer
	next        int
}

func serveOne(ctx context.Context, nc *nats.Conn, reply, agent, attemptID string, p *pendingRequest, handlerFor HandlerFor) {
	w := &tunnelWriter{nc: nc, reply: reply, header: http.Header{}}
	req, err := http.NewRequestWithContext(ctx, p.method, p.uri, &p.body)
	if err != nil {
		w.fail(err)
		return
	}
	req.Header = p.header
	req.RemoteAddr = agent
	h := handlerFor(agent, attemptID)
	if h == nil {
		http.Error(w, fmt.Sprintf("attempt %s is not leased to agent %s", attemptID, agent), http.StatusForbidden)
		w.end()
		return
	}
	h.ServeHTTP(w, req)
	w.end()
}

// tunnelWriter is the http.ResponseWriter of a tunnelled request: the head
// goes with the first write or flush, each write is a body message.
type tunnelWriter struct {
	nc     *nats.Conn
	reply  string
	header http.Header
	status int
	seq    int
	err    error
}

func (w *tunnelWriter) Header() http.Header { return w.header }

func (w *tunnelWriter) WriteHeader(status int) {
	if w.status != 0 {
		return
	}
	w.status = status
	m := w.msg("head")
	m.Header.Set(hdrStatus, strconv.Itoa(status))
	for k, vs := range w.header {
		for _, v := range vs {
			m.Header.Add(hdrPrefix+k, v)
		}
	}
	w.send(m)
}

func (w *tunnelWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	for off := 0; off < len(b); off += tunnelChunk {
		m := w.msg("body")
		m.Data = b[off:min(off+tunnelChunk, len(b))]
		w.send(m)
	}
	return len(b), w.err
}

// Flush sends nothing more: every write is already a message.
func (w *tunnelWriter) Flush() {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
}

func (w *tunnelWriter) end() {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	w.send(w.msg("end"))
}

func (w *tunnelWriter) fail(err error) {
	m := w.msg("error")
	m.Data = []byte(err.Error())
	w.send(m)
}

func (w *tunnelWriter) msg(kind string) *nats.Msg {
	m := nats.NewMsg(w.reply)
	m.Header.Set(hdrKind, kind)
	m.Header.Set(hdrSeq, strconv.Itoa(w.seq))
	w.seq++
	return m
}

func (w *tunnelWriter) send(m *nats.Msg) {
	if w.err != nil {
		return
	}
	if err := w.nc.PublishMsg(m); err != nil {
		w.err = errors.Join(errors.New("tunnel: answer"), err)
	}
}
