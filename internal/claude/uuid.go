package claude

import (
	"crypto/rand"
	"fmt"
	"regexp"
)

// NewSessionID returns a random (version 4) UUID, the form --session-id requires.
func NewSessionID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on Linux
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

var uuidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// validSessionID reports whether s is a UUID the CLI accepts.
func validSessionID(s string) bool { return uuidRE.MatchString(s) }
