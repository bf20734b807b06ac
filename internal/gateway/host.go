package gateway

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// host is a canonical destination host: a lower-case DNS name without a
// trailing dot, or an IP address (IPv4-mapped IPv6 unmapped to IPv4).
type host struct {
	name string     // set for a DNS name
	ip   netip.Addr // valid for an IP literal
}

func (h host) String() string {
	if h.ip.IsValid() {
		return h.ip.String()
	}
	return h.name
}

// canonHost canonicalises a host as written in a request target or an
// allowlist entry, the way resolvers and browsers would read it: case and one
// trailing dot are dropped, brackets around IPv6 are removed, and every
// numeric IPv4 spelling inet_aton accepts (127.1, 0x7f.1, 0177.0.0.1,
// 2130706433) becomes dotted decimal. A host whose last label is numeric but
// is not a valid address is an error (WHATWG URL rules), as is anything that
// is not a plain LDH name: percent signs, spaces, zones, non-ASCII.
func canonHost(s string) (host, error) {
	if s == "" {
		return host{}, errors.New("empty host")
	}
	if strings.HasPrefix(s, "[") {
		if !strings.HasSuffix(s, "]") {
			return host{}, errors.New("unbalanced bracket")
		}
		return canonIPv6(s[1 : len(s)-1])
	}
	if strings.Contains(s, ":") {
		return canonIPv6(s)
	}
	s = strings.ToLower(s)
	s = strings.TrimSuffix(s, ".")
	if s == "" {
		return host{}, errors.New("empty host")
	}
	labels := strings.Split(s, ".")
	if isNumericLabel(labels[len(labels)-1]) {
		ip, err := parseIPv4(labels)
		if err != nil {
			return host{}, err
		}
		return host{ip: ip}, nil
	}
	if len(s) > 253 {
		return host{}, errors.New("name longer than 253 characters")
	}
	for _, l := range labels {
		if l == "" || len(l) > 63 {
			return host{}, errors.New("empty or over-long label")
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return host{}, fmt.Errorf("character %q not allowed in a host name", c)
			}
		}
	}
	return host{name: s}, nil
}

func canonIPv6(s string) (host, error) {
	if strings.Contains(s, "%") {
		return host{}, errors.New("IPv6 zones are not allowed")
	}
	ip, err := netip.ParseAddr(s)
	if err != nil || !ip.Is6() {
		return host{}, fmt.Errorf("bad IPv6 address %q", s)
	}
	return host{ip: ip.Unmap()}, nil
}

// isNumericLabel reports whether a label reads as a number: decimal digits,
// or 0x followed by hex digits (possibly none).
func isNumericLabel(l string) bool {
	if l == "" {
		return false
	}
	if strings.HasPrefix(l, "0x") {
		for i := 2; i < len(l); i++ {
			if !isHex(l[i]) {
				return false
			}
		}
		return true
	}
	for i := 0; i < len(l); i++ {
		if l[i] < '0' || l[i] > '9' {
			return false
		}
	}
	return true
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' }

// parseIPv4 reads one to four parts as inet_aton does: each part decimal,
// octal (leading 0) or hex (0x); the last part fills the remaining bytes.
func parseIPv4(parts []string) (netip.Addr, error) {
	if len(parts) > 4 {
		return netip.Addr{}, errors.New("more than four parts in a numeric address")
	}
	var v uint64
	for i, p := range parts {
		n, err := parseIPv4Part(p)
		if err != nil {
			return netip.Addr{}, err
		}
		if i < len(parts)-1 {
			if n > 255 {
				return netip.Addr{}, errors.New("numeric address part out of range")
			}
			v = v<<8 | n
			continue
		}
		rest := uint(4 - i) // bytes the last part fills
		if n >= 1<<(8*rest) {
			return netip.Addr{}, errors.New("numeric address part out of range")
		}
		v = v<<(8*rest) | n
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), nil
}

func parseIPv4Part(p string) (uint64, error) {
	base := 10
	switch {
	case p == "":
		return 0, errors.New("empty part in a numeric address")
	case strings.HasPrefix(p, "0x"):
		p, base = p[2:], 16
		if p == "" {
			return 0, nil
		}
	case len(p) > 1 && p[0] == '0':
		p, base = p[1:], 8
	}
	n, err := strconv.ParseUint(p, base, 64)
	if err != nil || n > 1<<32-1 {
		return 0, errors.New("bad numeric address part")
	}
	return n, nil
}

// splitTarget splits a CONNECT authority "host:port" and canonicalises both.
func splitTarget(target string) (host, int, error) {
	h, p, err := net.SplitHostPort(target)
	if err != nil {
		return host{}, 0, errors.New("want host:port")
	}
	port, err := parsePort(p)
	if err != nil {
		return host{}, 0, err
	}
	hh, err := canonHost(h)
	if err != nil {
		return host{}, 0, err
	}
	return hh, port, nil
}

func parsePort(p string) (int, error) {
	if p == "" {
		return 0, errors.New("missing port")
	}
	for i := 0; i < len(p); i++ {
		if p[i] < '0' || p[i] > '9' {
			return 0, fmt.Errorf("bad port %q", p)
		}
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 1 || n > 65535 {
		return 0, fmt.Errorf("bad port %q", p)
	}
	return n, nil
}

// allowEntry is one parsed Config.Allow entry.
type allowEntry struct {
	host     host   // exact host, or the suffix of a wildcard (a name)
	wildcard bool   // "*.suffix": any name below suffix, not suffix itself
	ports    []int  // nil: 80 and 443
	raw      string // as configured, for messages
}

// parseAllow parses "host", "host:port", "*.example.com" or
// "*.example.com:port"; IPv6 literals are written in brackets.
func parseAllow(raw string) (allowEntry, error) {
	e := allowEntry{raw: raw}
	s := strings.TrimSpace(raw)
	if s == "" || s == "*" {
		return e, errors.New("allow-all is not expressible; list the hosts")
	}
	if strings.HasPrefix(s, "*.") {
		e.wildcard = true
		s = s[2:]
	}
	h, p := s, ""
	switch {
	case strings.HasPrefix(s, "["):
		i := strings.IndexByte(s, ']')
		if i < 0 {
			return e, errors.New("unbalanced bracket")
		}
		h, p = s[:i+1], strings.TrimPrefix(s[i+1:], ":")
		if p == "" && len(s) > i+1 {
			return e, errors.New("missing port after ':'")
		}
	case strings.Count(s, ":") == 1:
		i := strings.IndexByte(s, ':')
		h, p = s[:i], s[i+1:]
		if p == "" {
			return e, errors.New("missing port after ':'")
		}
	case strings.Count(s, ":") > 1:
		return e, errors.New("write IPv6 addresses in brackets")
	}
	if p != "" {
		n, err := parsePort(p)
		if err != nil {
			return e, err
		}
		e.ports = []int{n}
	}
	hh, err := canonHost(h)
	if err != nil {
		return e, err
	}
	e.host = hh
	switch {
	case e.wildcard && hh.ip.IsValid():
		return e, errors.New("a wildcard needs a domain name, not an address")
	case e.wildcard && (hh.name == "localhost" || strings.HasSuffix(hh.name, ".localhost")):
		return e, errors.New("localhost names are always refused")
	case e.wildcard && !strings.Contains(hh.name, "."):
		return e, errors.New("a wildcard needs at least two labels after \"*.\" (\"*.example.com\")")
	}
	if why := refusedName(hh); why != "" {
		return e, fmt.Errorf("%s is always refused", why)
	}
	return e, nil
}

func (e allowEntry) matches(h host, port int) bool {
	if e.ports == nil {
		if port != 80 && port != 443 {
			return false
		}
	} else if port != e.ports[0] {
		return false
	}
	if e.wildcard {
		return h.name != "" && strings.HasSuffix(h.name, "."+e.host.name)
	}
	return h == e.host
}

// Known cloud metadata and host-agent addresses that are not link-local.
var metadataAddrs = []netip.Addr{
	netip.MustParseAddr("169.254.169.254"), // AWS, GCP, Azure, OpenStack, …
	netip.MustParseAddr("fd00:ec2::254"),   // AWS IPv6
	netip.MustParseAddr("100.100.100.200"), // Alibaba Cloud
	netip.MustParseAddr("168.63.129.16"),   // Azure wire server
	netip.MustParseAddr("192.0.0.192"),     // Oracle Cloud
}

var (
	thisNetwork = netip.MustParsePrefix("0.0.0.0/8")
	ipv4Compat  = netip.MustParsePrefix("::/96")
	nat64       = netip.MustParsePrefix("64:ff9b::/96")
	broadcast   = netip.MustParseAddr("255.255.255.255")
)

// refusedAddr says why a destination address is never reachable through the
// gateway ("" when it is fine): loopback, unspecified, link-local (which
// holds the metadata service), multicast, broadcast, known metadata
// addresses, IPv4-compatible forms, NAT64 forms of any of these, and the
// host's own addresses (own), where host services listen.
func refusedAddr(a netip.Addr, own []netip.Addr) string {
	a = a.Unmap()
	for _, m := range metadataAddrs {
		if a == m {
			return "metadata address " + a.String()
		}
	}
	switch {
	case a.IsLoopback():
		return "loopback address " + a.String()
	case a.IsUnspecified() || thisNetwork.Contains(a):
		return "unspecified address " + a.String()
	case a.IsLinkLocalUnicast():
		return "link-local address " + a.String()
	case a.IsMulticast() || a == broadcast:
		return "multicast or broadcast address " + a.String()
	case ipv4Compat.Contains(a):
		return "IPv4-compatible address " + a.String()
	case nat64.Contains(a):
		b := a.As16()
		if why := refusedAddr(netip.AddrFrom4([4]byte(b[12:])), own); why != "" {
			return "NAT64 form of " + why
		}
	}
	for _, o := range own {
		if a == o.Unmap() {
			return "the host's own address " + a.String()
		}
	}
	return ""
}

// refusedName says why a host is refused before any lookup: a literal
// address refusedAddr rejects (without the host's own addresses, which need
// a lookup of the interfaces), or localhost and names under it.
func refusedName(h host) string {
	if h.ip.IsValid() {
		return refusedAddr(h.ip, nil)
	}
	if h.name == "localhost" || strings.HasSuffix(h.name, ".localhost") {
		return "loopback name " + h.name
	}
	return ""
}

// ownAddrs lists the host's interface addresses.
func ownAddrs() []netip.Addr {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	var out []netip.Addr
	for _, a := range addrs {
		if p, err := netip.ParsePrefix(a.String()); err == nil {
			out = append(out, p.Addr().Unmap())
		}
	}
	return out
}
