package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// TokenFile is the set of bearer tokens the server accepts, read from a
// file and re-read when its content changes. Each line is a token,
// optionally followed by whitespace and a name that identifies its holder
// (sent upstream as x-authz-subject; "line-N" when left out). Blank lines
// and lines starting with "#" are skipped.
//
// Tokens are kept only as SHA-256 digests: a lookup hashes the presented
// token, so the time a map lookup takes says nothing about the tokens.
type TokenFile struct {
	path string
	set  atomic.Pointer[tokenSet]

	mu sync.Mutex // serialises reloads
}

type tokenSet struct {
	// digest is the SHA-256 of the file's content.
	digest [sha256.Size]byte
	names  map[[sha256.Size]byte]string
}

// LoadTokenFile reads path; it fails when the file cannot be read or a
// line cannot be parsed.
func LoadTokenFile(path string) (*TokenFile, error) {
	f := &TokenFile{path: path}
	if _, err := f.Reload(); err != nil {
		return nil, err
	}
	return f, nil
}

// Lookup returns the name of a token, and whether it is accepted.
func (f *TokenFile) Lookup(token string) (string, bool) {
	name, ok := f.set.Load().names[sha256.Sum256([]byte(token))]
	return name, ok
}

// Len is the number of tokens accepted.
func (f *TokenFile) Len() int { return len(f.set.Load().names) }

// Reload re-reads the file and reports whether its content changed. On
// an error the tokens read last stay in force: a half-written or broken
// file must not lock everyone out, nor let anyone in.
func (f *TokenFile) Reload() (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	b, err := os.ReadFile(f.path)
	if err != nil {
		return false, fmt.Errorf("tokens file: %w", err)
	}
	digest := sha256.Sum256(b)
	if cur := f.set.Load(); cur != nil && cur.digest == digest {
		return false, nil
	}
	names, err := parseTokens(b)
	if err != nil {
		return false, fmt.Errorf("tokens file %s: %w", f.path, err)
	}
	f.set.Store(&tokenSet{digest: digest, names: names})
	return true, nil
}

// Watch re-reads the file every interval until ctx ends. Polling, rather
// than file-system events, also follows the symlink swap with which
// Kubernetes updates a mounted Secret.
func (f *TokenFile) Watch(ctx context.Context, interval time.Duration, log *slog.Logger) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			changed, err := f.Reload()
			switch {
			case err != nil:
				log.Warn("keeping the previous tokens", "error", err)
			case changed:
				log.Info("tokens reloaded", "file", f.path, "tokens", f.Len())
			}
		}
	}
}

func parseTokens(b []byte) (map[[sha256.Size]byte]string, error) {
	names := map[[sha256.Size]byte]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) > 2 {
			return nil, fmt.Errorf("line %d: want a token and an optional name, found %d fields", n, len(fields))
		}
		name := fmt.Sprintf("line-%d", n)
		if len(fields) == 2 {
			name = fields[1]
		}
		names[sha256.Sum256([]byte(fields[0]))] = name
	}
	return names, sc.Err()
}
