package gateway

import (
	"errors"
	"net"
	"os"
)

// The socket is the sandbox's only way out and carries the operator's key,
// so only the sandbox's own user may use it: the directory it lives in and
// its mode keep other users from reaching it, and the kernel's record of
// who connected (SO_PEERCRED; LOCAL_PEERCRED on macOS) refuses them should
// they get there anyway.
// The sandbox's forwarder runs as the slot's host uid (its user namespace
// maps it 1:1), which is what the kernel reports.

// ownSocket gives the socket to peer: its group, mode 0660 (0600 when peer
// is zerg's own user). Without a peer it is 0666.
func ownSocket(path string, peer *Peer) error {
	if peer == nil {
		return os.Chmod(path, 0o666)
	}
	if peer.UID == os.Geteuid() {
		return os.Chmod(path, 0o600)
	}
	if err := os.Chown(path, -1, peer.GID); err != nil {
		return err
	}
	return os.Chmod(path, 0o660)
}

// peerListener accepts only connections of uid (or of zerg's own user,
// who holds the key anyway).
type peerListener struct {
	net.Listener
	g   *Gateway
	uid int
}

func (l *peerListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		uid, err := peerUID(c)
		if err == nil && (uid == l.uid || uid == os.Geteuid()) {
			return c, nil
		}
		c.Close()
		l.g.foreignPeer(uid)
	}
}

// peerUID is the uid of the process that connected c.
func peerUID(c net.Conn) (int, error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return -1, errors.New("not a unix socket")
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return -1, err
	}
	uid, credErr := -1, error(nil)
	if err := raw.Control(func(fd uintptr) { uid, credErr = socketPeerUID(int(fd)) }); err != nil {
		return -1, err
	}
	return uid, credErr
}

// foreignPeer counts a refused connection and audits the first of each uid.
func (g *Gateway) foreignPeer(uid int) {
	g.mu.Lock()
	g.stats.ForeignPeers++
	if g.foreign == nil {
		g.foreign = map[int]bool{}
	}
	first := !g.foreign[uid]
	g.foreign[uid] = true
	g.mu.Unlock()
	if first {
		g.auditLive(AuditForeignPeer, map[string]any{"uid": uid})
	}
}
