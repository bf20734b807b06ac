package gateway

import (
	"net/netip"
	"strings"
	"testing"
)

func TestCanonHost(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Example.COM.", "example.com"},
		{"example.com", "example.com"},
		{"a_b-c.example", "a_b-c.example"},
		{"127.1", "127.0.0.1"},
		{"127.0.1", "127.0.0.1"},
		{"0x7f.1", "127.0.0.1"},
		{"0X7F.1", "127.0.0.1"},
		{"0177.0.0.1", "127.0.0.1"},
		{"2130706433", "127.0.0.1"},
		{"0x7f000001", "127.0.0.1"},
		{"127.0.0.1.", "127.0.0.1"},
		{"0", "0.0.0.0"},
		{"0x", "0.0.0.0"},
		{"10.0x10.0.010", "10.16.0.8"},
		{"[::1]", "::1"},
		{"::1", "::1"},
		{"[::ffff:7f00:1]", "127.0.0.1"},
		{"[2001:DB8::1]", "2001:db8::1"},
		{"1.example", "1.example"}, // numeric first label, name last label: a name
	} {
		h, err := canonHost(c.in)
		if err != nil || h.String() != c.want {
			t.Errorf("canonHost(%q) = %q, %v; want %q", c.in, h, err, c.want)
		}
	}
	for _, bad := range []string{"", ".", "a..b", "example.com..", "256.0.0.1", "1.2.3.4.5", "0x1g.1", "example.0x1",
		"foo.123", "08.0.0.1", "4294967296", "1.16777216", "ex%61mple.com", "exa mple", "bücher.example", "[::1",
		"[fe80::1%eth0]", "fe80::1%25eth0", strings.Repeat("a", 64) + ".com", strings.Repeat("a.", 127) + "com"} {
		if h, err := canonHost(bad); err == nil {
			t.Errorf("canonHost(%q) = %q, want an error", bad, h)
		}
	}
}

func TestRefusedAddr(t *testing.T) {
	own := []netip.Addr{netip.MustParseAddr("192.168.1.5"), netip.MustParseAddr("2001:db8::5")}
	for _, c := range []struct{ ip, want string }{
		{"127.0.0.1", "loopback"}, {"127.255.0.9", "loopback"}, {"::1", "loopback"}, {"::ffff:127.0.0.1", "loopback"},
		{"0.0.0.0", "unspecified"}, {"0.1.2.3", "unspecified"}, {"::", "unspecified"},
		{"169.254.169.254", "metadata"}, {"fd00:ec2::254", "metadata"}, {"100.100.100.200", "metadata"},
		{"169.254.1.1", "link-local"}, {"fe80::1", "link-local"},
		{"224.0.0.1", "multicast"}, {"255.255.255.255", "broadcast"}, {"ff02::1", "multicast"},
		{"::7f00:1", "IPv4-compatible"}, {"64:ff9b::7f00:1", "NAT64 form of loopback"},
		{"192.168.1.5", "own address"}, {"2001:db8::5", "own address"},
		{"203.0.113.7", ""}, {"10.0.0.1", ""}, {"192.168.1.6", ""}, {"2606:4700::1", ""}, {"64:ff9b::808:808", ""},
	} {
		got := refusedAddr(netip.MustParseAddr(c.ip), own)
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("refusedAddr(%s) = %q, want %q", c.ip, got, c.want)
		}
	}
}
