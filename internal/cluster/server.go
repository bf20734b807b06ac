package cluster

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/gofrs/flock"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/zergrush/zerg/internal/fsx"
	"golang.org/x/crypto/bcrypt"
)

// ServerOptions configure StartServer.
type ServerOptions struct {
	// Dir is the store directory (required). It holds jetstream/ (the
	// file store), auth.json (the coordinator's password and the agents'
	// password hashes) and, with TLS, tls/ (the CA and server certificate).
	// One server per directory: the file store locks it.
	Dir string
	// Host to listen on; "" means 127.0.0.1. A host other than a loopback
	// address requires TLS.
	Host string
	// Port to listen on; 0 lets the system choose.
	Port int
	// MaxStore bounds the file store in bytes; 0 means 1 GiB.
	MaxStore int64
	// TLS makes the server require TLS. A private CA and a server
	// certificate are generated on first use and kept in Dir/tls.
	TLS bool
	// TLSNames are extra DNS names or IP addresses put in the server
	// certificate, beside Host, localhost and 127.0.0.1: the names agents
	// dial when the server listens on 0.0.0.0 or behind another name.
	TLSNames []string
}

// DefaultMaxStore is the file store bound when ServerOptions.MaxStore is 0.
const DefaultMaxStore = 1 << 30

// Server is the coordinator's embedded NATS server.
type Server struct {
	ns     *server.Server
	opts   *server.Options
	dir    string
	tlsOn  bool
	caPEM  string
	mu     sync.Mutex // guards auth and reloads
	auth   authFile
	closed bool
	lock   *flock.Flock
}

// authFile is Dir/auth.json. Agents' passwords are kept only as bcrypt
// hashes (nats-server accepts those in place of a password), so the file
// does not hand out working agent credentials; the coordinator's own password
// is kept in clear because the coordinator must present it.
type authFile struct {
	Coordinator string            `json:"coordinator"`
	Agents      map[string]string `json:"agents"` // name -> bcrypt hash
}

// StartServer starts an embedded JetStream server as described by o and
// waits until it accepts connections.
func StartServer(o ServerOptions) (*Server, error) {
	if o.Dir == "" {
		return nil, errors.New("cluster: ServerOptions.Dir is required")
	}
	if o.Host == "" {
		o.Host = "127.0.0.1"
	}
	if !o.TLS && !isLoopback(o.Host) {
		return nil, fmt.Errorf("cluster: listening on %s (not loopback) requires TLS", o.Host)
	}
	if o.MaxStore == 0 {
		o.MaxStore = DefaultMaxStore
	}
	if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("cluster: store dir: %w", err)
	}
	// One server per store directory. nats-server does not stop a second
	// server in the same process from opening the same file store.
	lock := flock.New(filepath.Join(o.Dir, "lock"))
	locked, err := lock.TryLock()
	if err != nil {
		return nil, fmt.Errorf("cluster: lock store dir: %w", err)
	}
	if !locked {
		return nil, fmt.Errorf("cluster: store dir %s is in use by another server", o.Dir)
	}
	s, err := startServer(o, lock)
	if err != nil {
		_ = lock.Unlock()
		return nil, err
	}
	return s, nil
}

func startServer(o ServerOptions, lock *flock.Flock) (*Server, error) {
	s := &Server{dir: o.Dir, tlsOn: o.TLS, lock: lock}
	if err := s.loadAuth(); err != nil {
		return nil, err
	}
	port := o.Port
	if port == 0 {
		port = server.RANDOM_PORT
	}
	opts := &server.Options{
		ServerName:        "zerg",
		Host:              o.Host,
		Port:              port,
		NoSigs:            true, // the library must not install signal handlers
		NoLog:             true,
		JetStream:         true,
		StoreDir:          filepath.Join(o.Dir, "jetstream"),
		JetStreamMaxStore: o.MaxStore,
		// Memory streams are not used; keep the server from reserving
		// a share of the host's memory for them.
		JetStreamMaxMemory:     64 << 20,
		AuthTimeout:            5,
		MaxPayload:             4 << 20,
		DisableJetStreamBanner: true,
	}
	if o.TLS {
		cfg, caPEM, err := loadOrCreateTLS(filepath.Join(o.Dir, "tls"), certNames(o.Host, o.TLSNames))
		if err != nil {
			return nil, err
		}
		opts.TLS = true
		opts.TLSConfig = cfg
		opts.TLSTimeout = 3
		s.caPEM = caPEM
	}
	opts.Users = s.users()
	ns, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("cluster: server: %w", err)
	}
	ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		ns.Shutdown()
		return nil, errors.New("cluster: server not ready for connections within 10s")
	}
	if !ns.JetStreamEnabled() {
		// With logging off, a failed JetStream start would go unnoticed.
		ns.Shutdown()
		return nil, fmt.Errorf("cluster: JetStream did not start on %s", opts.StoreDir)
	}
	s.ns, s.opts = ns, opts
	return s, nil
}

// ClientURL is the URL clients dial: nats:// or tls://host:port, with a
// loopback address when the server listens on all interfaces.
func (s *Server) ClientURL() string {
	scheme := "nats"
	if s.tlsOn {
		scheme = "tls"
	}
	host, port := s.opts.Host, 0
	if a, ok := s.ns.Addr().(*net.TCPAddr); ok {
		port = a.Port
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return scheme + "://" + net.JoinHostPort(host, strconv.Itoa(port))
}

// CA is the PEM CA certificate clients verify the server against ("" without
// TLS).
func (s *Server) CA() string { return s.caPEM }

// CoordinatorCreds are the credentials of the coordinator user, which may
// do anything.
func (s *Server) CoordinatorCreds() Creds {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Creds{URL: s.ClientURL(), User: CoordinatorUser, Password: s.auth.Coordinator, CA: s.caPEM}
}

// AddAgent creates the agent's user, or rotates its password when it exists
// (connections using the old password are closed). The returned Creds are
// the only place the password appears. The agent's result bucket is not
// created here: see EnsureAgentStore.
func (s *Server) AddAgent(name string) (Creds, error) {
	if err := ValidAgentName(name); err != nil {
		return Creds{}, err
	}
	pw := make([]byte, 32)
	if _, err := rand.Read(pw); err != nil {
		return Creds{}, err
	}
	password := base64.RawURLEncoding.EncodeToString(pw)
	// The password has 256 bits of entropy, so bcrypt's cost buys nothing
	// against guessing; the minimum keeps each agent connect cheap.
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		return Creds{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old, had := s.auth.Agents[name]
	s.auth.Agents[name] = string(hash)
	if err := s.saveAuthAndReload(); err != nil {
		if had {
			s.auth.Agents[name] = old
		} else {
			delete(s.auth.Agents, name)
		}
		return Creds{}, err
	}
	return Creds{URL: s.ClientURL(), User: name, Password: password, CA: s.caPEM}, nil
}

// RemoveAgent deletes the agent's user; its connections are closed.
// Removing an unknown agent is not an error.
func (s *Server) RemoveAgent(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, had := s.auth.Agents[name]
	if !had {
		return nil
	}
	delete(s.auth.Agents, name)
	if err := s.saveAuthAndReload(); err != nil {
		s.auth.Agents[name] = old
		return err
	}
	return nil
}

// Agents lists the agents that have credentials, sorted.
func (s *Server) Agents() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	names := make([]string, 0, len(s.auth.Agents))
	for n := range s.auth.Agents {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Shutdown stops the server and waits until it has stopped.
func (s *Server) Shutdown() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.mu.Unlock()
	s.ns.Shutdown()
	s.ns.WaitForShutdown()
	_ = s.lock.Unlock()
}

func (s *Server) users() []*server.User {
	users := []*server.User{{Username: CoordinatorUser, Password: s.auth.Coordinator}}
	names := make([]string, 0, len(s.auth.Agents))
	for n := range s.auth.Agents {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		users = append(users, &server.User{Username: n, Password: s.auth.Agents[n], Permissions: AgentPermissions(n)})
	}
	return users
}

// saveAuthAndReload persists s.auth and applies the user list to the running
// server. The caller holds s.mu.
func (s *Server) saveAuthAndReload() error {
	if s.closed {
		return errors.New("cluster: server is shut down")
	}
	if err := s.saveAuth(); err != nil {
		return err
	}
	opts := s.opts.Clone()
	opts.Users = s.users()
	if err := s.ns.ReloadOptions(opts); err != nil {
		return fmt.Errorf("cluster: reload users: %w", err)
	}
	s.opts = opts
	return nil
}

func (s *Server) authPath() string { return filepath.Join(s.dir, "auth.json") }

func (s *Server) loadAuth() error {
	p := s.authPath()
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		pw := make([]byte, 32)
		if _, err := rand.Read(pw); err != nil {
			return err
		}
		s.auth = authFile{Coordinator: base64.RawURLEncoding.EncodeToString(pw), Agents: map[string]string{}}
		return s.saveAuth()
	}
	if err != nil {
		return fmt.Errorf("cluster: read %s: %w", p, err)
	}
	if err := json.Unmarshal(b, &s.auth); err != nil {
		return fmt.Errorf("cluster: parse %s: %w", p, err)
	}
	if s.auth.Coordinator == "" {
		return fmt.Errorf("cluster: %s: field \"coordinator\" is empty", p)
	}
	if s.auth.Agents == nil {
		s.auth.Agents = map[string]string{}
	}
	for name := range s.auth.Agents {
		if err := ValidAgentName(name); err != nil {
			return fmt.Errorf("cluster: %s: %w", p, err)
		}
	}
	return nil
}

func (s *Server) saveAuth() error {
	b, err := json.MarshalIndent(s.auth, "", "  ")
	if err != nil {
		return err
	}
	return fsx.WriteFileAtomicMode(s.authPath(), append(b, '\n'), 0o600)
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
