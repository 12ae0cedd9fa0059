package natsd

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/nats-io/nkeys"
)

// maxSecretFile caps the size of a secret or key-list file.
const maxSecretFile = 64 << 10

// readSecret returns the first line of the file given to flag, trimmed.
// Errors name the flag and the file, never the content.
func readSecret(flag, path string) (string, error) {
	b, err := readSmall(flag, path)
	if err != nil {
		return "", err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	secret := strings.TrimSpace(line)
	if secret == "" {
		return "", badOption("%s %s: the first line is empty: want the secret there", flag, path)
	}
	return secret, nil
}

// readNKeys returns the NKey public user keys of the --nats-nkey-users
// file, one a line; blank lines and # comments are skipped.
func readNKeys(path string) ([]string, error) {
	const flag = "--nats-nkey-users"
	b, err := readSmall(flag, path)
	if err != nil {
		return nil, err
	}
	var keys []string
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for n := 1; sc.Scan(); n++ {
		k := strings.TrimSpace(sc.Text())
		if k == "" || strings.HasPrefix(k, "#") {
			continue
		}
		if !nkeys.IsValidPublicUserKey(k) {
			// A seed pasted here by mistake must not be echoed.
			return nil, badOption("%s %s:%d: not an NKey public user key (U...)", flag, path, n)
		}
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return nil, badOption("%s %s: no public user key in the file", flag, path)
	}
	return keys, nil
}

// readSmall reads a file of at most maxSecretFile bytes.
func readSmall(flag, path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxSecretFile+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	if len(b) > maxSecretFile {
		return nil, badOption("%s %s: larger than %d bytes", flag, path, maxSecretFile)
	}
	if len(b) == 0 {
		return nil, badOption("%s %s: empty file", flag, path)
	}
	return b, nil
}
