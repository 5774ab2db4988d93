package dataset

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"repro/internal/datadir"
)

// httpClient fails fast when there is no network: a short dial, TLS and
// response-header timeout (the body itself may take as long as ctx allows).
var httpClient = &http.Client{
	Transport: &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 20 * time.Second,
	},
}

// DefaultPullDir is where Pull puts files when no directory is given:
// REPRO_DATA_DIR when set, else the per-user cache data directory.
func DefaultPullDir() (string, error) {
	ds := datadir.Candidates()
	if len(ds) == 0 {
		return "", fmt.Errorf("no data directory: set %s", datadir.Env)
	}
	return ds[0], nil
}

// Pull fetches the named dataset from its official source into dir ("" =
// DefaultPullDir). Files published byte-for-byte upstream (File.URL) are
// downloaded, checked against their sha256 and installed under their
// catalogue path. For datasets whose files are a conversion of an official
// release archive, the archives are downloaded into dir/upstream/NAME/ and
// Pull reports that the conversion (described in the data README) must be
// run; it does not pretend a converted file exists. Offline, the first
// request fails within seconds with a message that says so.
func Pull(ctx context.Context, name, dir string) error {
	d, ok := Lookup(name)
	if !ok {
		return fmt.Errorf("pull: unknown dataset %q (known: %v)", name, Names())
	}
	if dir == "" {
		var err error
		if dir, err = DefaultPullDir(); err != nil {
			return fmt.Errorf("pull %s: %v", name, err)
		}
	}
	return pull(ctx, httpClient, d, dir)
}

func pull(ctx context.Context, client *http.Client, d *Dataset, dir string) error {
	var derived []string
	for _, f := range d.Files {
		if f.URL == "" {
			derived = append(derived, f.Path)
			continue
		}
		dst := filepath.Join(dir, filepath.FromSlash(f.Path))
		if err := download(ctx, client, f.URL, dst, f.SHA256); err != nil {
			return fmt.Errorf("pull %s: %w", d.Name, err)
		}
	}
	if len(derived) == 0 {
		return nil
	}
	if len(d.Download) == 0 {
		return fmt.Errorf("pull %s: no official download is known for %s; place the files in %s by hand", d.Name, strings.Join(derived, ", "), dir)
	}
	up := filepath.Join(dir, "upstream", d.Name)
	for _, u := range d.Download {
		if err := download(ctx, client, u, filepath.Join(up, path.Base(u)), ""); err != nil {
			return fmt.Errorf("pull %s: %w", d.Name, err)
		}
	}
	return fmt.Errorf("pull %s: downloaded the official release (%s) into %s; repro's files %s are a conversion of it (see the data README, section Formats) that must be done before use",
		d.Name, strings.Join(d.Download, ", "), up, strings.Join(derived, ", "))
}

// download fetches url into dst through a temporary file, checking the
// sha256 when want is set; dst appears only complete and verified.
func download(ctx context.Context, client *http.Client, url, dst, want string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		// Dial and lookup failures (*net.OpError, *net.DNSError) are
		// net.Errors, as is the *url.Error the client wraps them in.
		var ne net.Error
		if errors.As(err, &ne) {
			return fmt.Errorf("cannot reach %s (no network access?): %v", url, err)
		}
		return fmt.Errorf("download %s: %v", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("download %s: HTTP %s", url, resp.Status)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".pull-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(tmp, h), resp.Body); err != nil {
		tmp.Close()
		return fmt.Errorf("download %s: %v", url, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if got := hex.EncodeToString(h.Sum(nil)); want != "" && got != want {
		return fmt.Errorf("download %s: sha256 %s, want %s (the upstream file changed; not installed)", url, got, want)
	}
	return os.Rename(tmp.Name(), dst)
}
