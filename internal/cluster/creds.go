package cluster

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/zergrush/zerg/internal/fsx"
)

// Creds is what a client needs to reach the coordinator's server.
type Creds struct {
	URL      string `json:"url"`
	User     string `json:"user"`
	Password string `json:"password"`
	// CA is the PEM certificate of the server's CA; set when the server
	// requires TLS.
	CA string `json:"ca,omitempty"`
}

// WriteCreds writes c to path as JSON, readable by the owner only.
func (c Creds) WriteCreds(path string) error {
	if err := c.validate(path); err != nil {
		return err
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	if err := fsx.WriteFileAtomicMode(path, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("cluster: write credentials %s: %w", path, err)
	}
	return nil
}

// ReadCreds reads a file written by WriteCreds.
func ReadCreds(path string) (Creds, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Creds{}, fmt.Errorf("cluster: read credentials: %w", err)
	}
	var c Creds
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return Creds{}, fmt.Errorf("cluster: credentials %s: %w", path, err)
	}
	if err := c.validate(path); err != nil {
		return Creds{}, err
	}
	return c, nil
}

func (c Creds) validate(path string) error {
	field := func(name, why string) error {
		return fmt.Errorf("cluster: credentials %s: field %q %s", path, name, why)
	}
	if c.URL == "" {
		return field("url", "is empty")
	}
	u, err := url.Parse(c.URL)
	if err != nil || u.Host == "" || (u.Scheme != "nats" && u.Scheme != "tls") {
		return field("url", fmt.Sprintf("is %q, want nats://host:port or tls://host:port", c.URL))
	}
	if c.User == "" {
		return field("user", "is empty")
	}
	if c.Password == "" {
		return field("password", "is empty")
	}
	if c.CA != "" {
		if !x509.NewCertPool().AppendCertsFromPEM([]byte(c.CA)) {
			return field("ca", "holds no PEM certificate")
		}
	} else if u.Scheme == "tls" {
		return field("ca", "is empty but the url asks for TLS")
	}
	return nil
}

// Connect dials the server with c. With a CA, the connection uses TLS and
// verifies the server against that CA only (not the system roots). The
// connection's inbox prefix is _INBOX_<user>: agents are only allowed to
// subscribe there. It reconnects indefinitely after a successful connect;
// the first connect must succeed before ctx ends.
func Connect(ctx context.Context, c Creds, opts ...nats.Option) (*nats.Conn, error) {
	if err := c.validate("(in memory)"); err != nil {
		return nil, err
	}
	timeout := 5 * time.Second
	if d, ok := ctx.Deadline(); ok {
		timeout = time.Until(d)
		if timeout <= 0 {
			return nil, ctx.Err()
		}
	}
	all := []nats.Option{
		nats.Name("zerg " + c.User),
		nats.UserInfo(c.User, c.Password),
		nats.CustomInboxPrefix(inboxPrefix(c.User)),
		nats.Timeout(timeout),
		nats.MaxReconnects(-1),
		// Without a handler nats.go prints asynchronous errors on
		// stderr; callers that want them pass nats.ErrorHandler in opts.
		nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}),
	}
	if c.CA != "" {
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM([]byte(c.CA))
		u, _ := url.Parse(c.URL)
		all = append(all, nats.Secure(&tls.Config{RootCAs: pool, ServerName: u.Hostname(), MinVersion: tls.VersionTLS12}))
	}
	all = append(all, opts...)
	type result struct {
		nc  *nats.Conn
		err error
	}
	ch := make(chan result, 1)
	go func() {
		nc, err := nats.Connect(c.URL, all...)
		ch <- result{nc, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, fmt.Errorf("cluster: connect to %s as %s: %w", c.URL, c.User, r.err)
		}
		return r.nc, nil
	case <-ctx.Done():
		go func() {
			if r := <-ch; r.nc != nil {
				r.nc.Close()
			}
		}()
		return nil, ctx.Err()
	}
}

// IsPermissionError reports whether err is a NATS permissions violation. The
// server reports those asynchronously: they reach the connection's error
// handler (nats.ErrorHandler), while the refused request itself times out.
func IsPermissionError(err error) bool {
	return errors.Is(err, nats.ErrPermissionViolation)
}
