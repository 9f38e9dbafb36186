// verify_log.go: an independent check of what dirauthd serves for one transparency log, written
// against the C2SP specifications with the Go checksum database's own code (golang.org/x/mod,
// sumdb/note and sumdb/tlog) and the Go standard library, and nothing of dirauth.
//
// Given the log's URL prefix (.../v1/<namespace>/log/), its origin, the log's verifier key, the
// cosigner's verifier key (c2sp.org/signed-note vkey of type 0x04), the authority's verifier key
// (which signs the snapshot headers that are the leaves), the epoch of leaf 0 and the tree sizes
// the log checkpointed, it checks, for every checkpointed size:
//   - the checkpoint (c2sp.org/tlog-checkpoint) is a signed note (note.Open) with the log's
//     signature and a cosignature/v1 (c2sp.org/tlog-cosignature, Ed25519 over "cosignature/v1\n
//     time T\n" || the note's text) by the cosigner; the latest comes from <prefix>checkpoint,
//     the others from the proof files of that size;
//   - the tiles (c2sp.org/tlog-tiles, tile/<L>/<N>[.p/<W>], Go's path encoding without its height
//     element) rebuild the checkpoint's root (tlog.TileHashReader, which checks every tile it
//     reads against the tree, and tlog.TreeHash);
//   - every entry bundle (tile/entries/<N>[.p/<W>], big-endian uint16 length-prefixed entries)
//     hashes (RFC 6962) to the level 0 tile;
//   - the proof file (c2sp.org/tlog-proof) of each leaf against that size: its index, its
//     checkpoint, its extra (the snapshot header, a signed note by the authority whose text is the
//     leaf), and its inclusion proof (tlog.CheckRecord), which is also the one tlog.ProveRecord
//     computes from the tiles;
//   - the consistency proof from every smaller checkpointed size, and from a few sizes that were
//     never checkpointed (tlog.CheckTree, and equal to tlog.ProveTree from the tiles).
//
// It also checks that the checks refuse: a checkpoint with a changed root, a cosignature with a
// changed time, a wrong inclusion and consistency proof. It prints one line per checkpointed size
// and exits 0 when everything verifies, 1 at the first failure (with a sentence).
package main

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

const tileHeight = 8 // c2sp.org/tlog-tiles: 256 hashes to a tile

var client = &http.Client{Timeout: 30 * time.Second}

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "verify_log: "+format+"\n", args...)
	os.Exit(1)
}

// get fetches url and checks its status, content type and caching.
func get(url, contentType, cacheHas string) []byte {
	response, err := client.Get(url)
	if err != nil {
		fail("GET %s: %v", url, err)
	}
	defer response.Body.Close()
	body, err := io.ReadAll(response.Body)
	if err != nil {
		fail("GET %s: %v", url, err)
	}
	if response.StatusCode != http.StatusOK {
		fail("GET %s: status %d: %s", url, response.StatusCode, body)
	}
	if got := response.Header.Get("Content-Type"); contentType != "" && got != contentType {
		fail("GET %s: Content-Type %q, want %q", url, got, contentType)
	}
	if got := response.Header.Get("Cache-Control"); cacheHas != "" && !strings.Contains(got, cacheHas) {
		fail("GET %s: Cache-Control %q lacks %q", url, got, cacheHas)
	}
	return body
}

// status fetches url and returns only its status.
func status(url string) int {
	response, err := client.Get(url)
	if err != nil {
		fail("GET %s: %v", url, err)
	}
	io.Copy(io.Discard, response.Body)
	response.Body.Close()
	return response.StatusCode
}

// ---- c2sp.org/tlog-cosignature, Ed25519 (type 0x04) ----

// cosigner is a note.Verifier for cosignature/v1: a signature is a big-endian uint64 timestamp
// followed by an Ed25519 signature of "cosignature/v1\ntime <timestamp>\n" || the note's text.
type cosigner struct {
	name  string
	hash  uint32
	key   ed25519.PublicKey
	times map[string]uint64 // the timestamp of each text verified
}

func newCosigner(vkey string) (*cosigner, error) {
	parts := strings.Split(vkey, "+")
	if len(parts) != 3 {
		return nil, errors.New("a vkey is name+hash+key")
	}
	key, err := base64.StdEncoding.DecodeString(parts[2])
	if err != nil || len(key) != 1+ed25519.PublicKeySize || key[0] != 0x04 {
		return nil, errors.New("not a type 0x04 Ed25519 key")
	}
	id := sha256.Sum256(append([]byte(parts[0]+"\n"), key...))
	hash := binary.BigEndian.Uint32(id[:4])
	if fmt.Sprintf("%08x", hash) != parts[1] {
		return nil, fmt.Errorf("key hash %s, the key makes %08x", parts[1], hash)
	}
	return &cosigner{parts[0], hash, ed25519.PublicKey(key[1:]), map[string]uint64{}}, nil
}

func (c *cosigner) Name() string    { return c.name }
func (c *cosigner) KeyHash() uint32 { return c.hash }
func (c *cosigner) Verify(text, sig []byte) bool {
	if len(sig) != 8+ed25519.SignatureSize {
		return false
	}
	timestamp := binary.BigEndian.Uint64(sig[:8])
	if timestamp > 1<<63-1 {
		return false
	}
	message := fmt.Sprintf("cosignature/v1\ntime %d\n%s", timestamp, text)
	if !ed25519.Verify(c.key, []byte(message), sig[8:]) {
		return false
	}
	c.times[string(text)] = timestamp
	return true
}

// ---- c2sp.org/tlog-checkpoint ----

type checkpoint struct {
	note *note.Note
	raw  []byte
	size int64
	root tlog.Hash
}

// openCheckpoint verifies a checkpoint note: both signatures, and a text of origin, size, root.
func openCheckpoint(raw []byte, origin string, logKey note.Verifier, cosign *cosigner) (*checkpoint, error) {
	n, err := note.Open(raw, note.VerifierList(logKey, cosign))
	if err != nil {
		return nil, fmt.Errorf("note.Open: %v", err)
	}
	type key struct {
		name string
		hash uint32
	}
	signed := map[key]bool{}
	for _, s := range n.Sigs {
		signed[key{s.Name, s.Hash}] = true
	}
	if !signed[key{logKey.Name(), logKey.KeyHash()}] || !signed[key{cosign.Name(), cosign.KeyHash()}] {
		return nil, fmt.Errorf("signed by %v, want the log and the cosigner", n.Sigs)
	}
	lines := strings.SplitAfter(n.Text, "\n")
	if len(lines) < 4 || lines[len(lines)-1] != "" {
		return nil, errors.New("a checkpoint is at least three lines")
	}
	if lines[0] != origin+"\n" {
		return nil, fmt.Errorf("origin %q, want %q", lines[0], origin)
	}
	size, err := strconv.ParseInt(strings.TrimSuffix(lines[1], "\n"), 10, 64)
	if err != nil || size < 0 || strconv.FormatInt(size, 10)+"\n" != lines[1] {
		return nil, fmt.Errorf("size line %q", lines[1])
	}
	rootText := strings.TrimSuffix(lines[2], "\n")
	root, err := base64.StdEncoding.DecodeString(rootText)
	if err != nil || len(root) != tlog.HashSize || base64.StdEncoding.EncodeToString(root) != rootText {
		return nil, fmt.Errorf("root line %q", lines[2])
	}
	c := &checkpoint{note: n, raw: raw, size: size}
	copy(c.root[:], root)
	return c, nil
}

// ---- c2sp.org/tlog-tiles ----

// tileReader fetches tiles from the log; Go's tile path tile/<H>/<L>/<N> is c2sp's without <H>.
type tileReader struct {
	prefix string
	reads  int               // tiles fetched
	cache  map[string][]byte // tiles are immutable: each is fetched once (and checked at each use)
}

func c2spPath(t tlog.Tile) string {
	path := t.Path()
	if t.L < 0 {
		return strings.Replace(path, fmt.Sprintf("tile/%d/data/", tileHeight), "tile/entries/", 1)
	}
	return strings.Replace(path, fmt.Sprintf("tile/%d/", tileHeight), "tile/", 1)
}

func (r *tileReader) Height() int { return tileHeight }
func (r *tileReader) ReadTiles(tiles []tlog.Tile) ([][]byte, error) {
	data := make([][]byte, len(tiles))
	for i, t := range tiles {
		path := c2spPath(t)
		back, err := tlog.ParseTilePath(strings.Replace(path, "tile/", fmt.Sprintf("tile/%d/", tileHeight), 1))
		if err != nil || back != t {
			return nil, fmt.Errorf("%s does not parse back to %v", path, t)
		}
		if cached, ok := r.cache[path]; ok {
			data[i] = cached
			continue
		}
		data[i] = get(r.prefix+path, "application/octet-stream", "immutable")
		if len(data[i]) != t.W*tlog.HashSize {
			return nil, fmt.Errorf("%s: %d bytes, want %d", path, len(data[i]), t.W*tlog.HashSize)
		}
		r.cache[path] = data[i]
		r.reads++
	}
	return data, nil
}
func (r *tileReader) SaveTiles(tiles []tlog.Tile, data [][]byte) {}

// bundle fetches entry bundle n of width w and splits it into its entries.
func bundle(prefix string, n int64, w int) [][]byte {
	path := c2spPath(tlog.Tile{H: tileHeight, L: -1, N: n, W: w})
	body := get(prefix+path, "application/octet-stream", "immutable")
	var entries [][]byte
	for len(body) > 0 {
		if len(body) < 2 {
			fail("%s: a length cut short", path)
		}
		length := int(binary.BigEndian.Uint16(body))
		if len(body) < 2+length {
			fail("%s: an entry cut short", path)
		}
		entries = append(entries, body[2:2+length])
		body = body[2+length:]
	}
	if len(entries) != w {
		fail("%s: %d entries, want %d", path, len(entries), w)
	}
	return entries
}

// ---- c2sp.org/tlog-proof ----

type proofFile struct {
	extra      []byte
	index      int64
	proof      tlog.RecordProof
	checkpoint []byte
}

func parseProof(body []byte) (*proofFile, error) {
	text := string(body)
	const first = "c2sp.org/tlog-proof@v1\n"
	if !strings.HasPrefix(text, first) {
		return nil, errors.New("no first line")
	}
	text = text[len(first):]
	p := &proofFile{}
	line := func() (string, error) {
		i := strings.IndexByte(text, '\n')
		if i < 0 {
			return "", errors.New("a line without its newline")
		}
		l := text[:i]
		text = text[i+1:]
		return l, nil
	}
	l, err := line()
	if err != nil {
		return nil, err
	}
	if strings.HasPrefix(l, "extra ") {
		if p.extra, err = base64.StdEncoding.DecodeString(l[len("extra "):]); err != nil {
			return nil, fmt.Errorf("extra: %v", err)
		}
		if l, err = line(); err != nil {
			return nil, err
		}
	}
	if !strings.HasPrefix(l, "index ") {
		return nil, fmt.Errorf("%q is not the index line", l)
	}
	p.index, err = strconv.ParseInt(l[len("index "):], 10, 64)
	if err != nil || p.index < 0 || "index "+strconv.FormatInt(p.index, 10) != l {
		return nil, fmt.Errorf("index line %q", l)
	}
	for {
		if l, err = line(); err != nil {
			return nil, err
		}
		if l == "" {
			break
		}
		h, err := tlog.ParseHash(l)
		if err != nil {
			return nil, fmt.Errorf("proof line %q: %v", l, err)
		}
		p.proof = append(p.proof, h)
	}
	p.checkpoint = []byte(text)
	return p, nil
}

func parseHashes(body []byte) (tlog.TreeProof, error) {
	var proof tlog.TreeProof
	scanner := bufio.NewScanner(bytes.NewReader(body))
	for scanner.Scan() {
		h, err := tlog.ParseHash(scanner.Text())
		if err != nil {
			return nil, fmt.Errorf("consistency line %q: %v", scanner.Text(), err)
		}
		proof = append(proof, h)
	}
	if len(body) > 0 && body[len(body)-1] != '\n' {
		return nil, errors.New("the last line lacks its newline")
	}
	return proof, nil
}

func equalProofs(a, b []tlog.Hash) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func main() {
	prefix := flag.String("prefix", "", "the log's URL prefix, ending in /log/")
	origin := flag.String("origin", "", "the checkpoint origin")
	logVkey := flag.String("log-key", "", "the log's verifier key (type 0x01)")
	cosignerVkey := flag.String("cosigner", "", "the cosigner's verifier key (type 0x04)")
	authorityVkey := flag.String("authority", "", "the verifier key of the authority signing the headers")
	firstEpoch := flag.Int64("first-epoch", 0, "the epoch of leaf 0 (one leaf per epoch)")
	sizesText := flag.String("sizes", "", "the checkpointed tree sizes, comma-separated")
	flag.Parse()

	logKey, err := note.NewVerifier(*logVkey)
	if err != nil {
		fail("log key: %v", err)
	}
	cosign, err := newCosigner(*cosignerVkey)
	if err != nil {
		fail("cosigner key: %v", err)
	}
	authority, err := note.NewVerifier(*authorityVkey)
	if err != nil {
		fail("authority key: %v", err)
	}
	var sizes []int64
	for _, s := range strings.Split(*sizesText, ",") {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 {
			fail("size %q", s)
		}
		sizes = append(sizes, n)
	}
	sort.Slice(sizes, func(i, j int) bool { return sizes[i] < sizes[j] })
	latestSize := sizes[len(sizes)-1]

	// The latest checkpoint, then every other one from a proof file of its size.
	latest, err := openCheckpoint(get(*prefix+"checkpoint", "text/plain; charset=utf-8", "max-age"), *origin,
		logKey, cosign)
	if err != nil {
		fail("checkpoint: %v", err)
	}
	if latest.size != latestSize {
		fail("checkpoint of size %d, want %d", latest.size, latestSize)
	}
	checkpoints := map[int64]*checkpoint{latestSize: latest}
	readers := map[int64]tlog.HashReader{}
	tiles := &tileReader{prefix: *prefix, cache: map[string][]byte{}}

	// The leaves, as the headers of the proof files give them (checked against the bundles).
	leaves := make([][]byte, latestSize)
	proofs := 0

	for _, size := range sizes {
		// The checkpoint of this size, from the proof file of its first leaf.
		url := fmt.Sprintf("%sproof/%d/%d", *prefix, *firstEpoch, size)
		file, err := parseProof(get(url, "", "max-age"))
		if err != nil {
			fail("%s: %v", url, err)
		}
		c, err := openCheckpoint(file.checkpoint, *origin, logKey, cosign)
		if err != nil {
			fail("%s: checkpoint: %v", url, err)
		}
		if c.size != size {
			fail("%s: checkpoint of size %d", url, c.size)
		}
		if size == latestSize && c.note.Text != latest.note.Text {
			fail("%s: another checkpoint than the latest", url)
		}
		checkpoints[size] = c

		// The tiles rebuild the root.
		hr := tlog.TileHashReader(tlog.Tree{N: size, Hash: c.root}, tiles)
		root, err := tlog.TreeHash(size, hr)
		if err != nil {
			fail("tiles of size %d: %v", size, err)
		}
		if root != c.root {
			fail("tiles of size %d make root %v, the checkpoint says %v", size, root, c.root)
		}
		readers[size] = hr

		// Every leaf's proof file against this size.
		for i := int64(0); i < size; i++ {
			url := fmt.Sprintf("%sproof/%d/%d", *prefix, *firstEpoch+i, size)
			file, err := parseProof(get(url, "", "max-age"))
			if err != nil {
				fail("%s: %v", url, err)
			}
			if file.index != i {
				fail("%s: index %d, want %d", url, file.index, i)
			}
			if !bytes.Equal(file.checkpoint, c.raw) {
				fail("%s: another checkpoint note than the one of size %d", url, size)
			}
			header, err := note.Open(file.extra, note.VerifierList(authority))
			if err != nil {
				fail("%s: the extra is not a header signed by the authority: %v", url, err)
			}
			leaf := []byte(header.Text)
			if leaves[i] != nil && !bytes.Equal(leaves[i], leaf) {
				fail("%s: leaf %d is another header than before", url, i)
			}
			leaves[i] = leaf
			if err := tlog.CheckRecord(file.proof, size, c.root, i, tlog.RecordHash(leaf)); err != nil {
				fail("%s: tlog.CheckRecord: %v", url, err)
			}
			expected, err := tlog.ProveRecord(size, i, hr)
			if err != nil {
				fail("tlog.ProveRecord(%d, %d): %v", size, i, err)
			}
			if !equalProofs(expected, file.proof) {
				fail("%s: the inclusion proof is not the one of the tiles", url)
			}
			proofs++
		}

		// The entry bundles of this size hash to the level 0 tiles.
		for n := int64(0); n*256 < size; n++ {
			w := 256
			if (n+1)*256 > size {
				w = int(size - n*256)
			}
			entries := bundle(*prefix, n, w)
			for k, entry := range entries {
				i := n*256 + int64(k)
				hashes, err := hr.ReadHashes([]int64{tlog.StoredHashIndex(0, i)})
				if err != nil {
					fail("leaf hash %d: %v", i, err)
				}
				if tlog.RecordHash(entry) != hashes[0] {
					fail("entry %d of bundle %d does not hash to the level 0 tile", k, n)
				}
				if !bytes.Equal(entry, leaves[i]) {
					fail("entry %d of bundle %d is not the header of its proof file", k, n)
				}
			}
		}

		// A partial tile of a size never checkpointed is not served.
		if _, checkpointed := checkpoints[size-1]; size%256 > 1 && !checkpointed &&
			status(*prefix+c2spPath(tlog.Tile{H: tileHeight, L: 0, N: size / 256, W: int(size%256) - 1})) !=
				http.StatusNotFound {
			fail("a partial tile of size %d - 1, never checkpointed, is served", size)
		}
		fmt.Printf("size %d: checkpoint signed and cosigned (time %d), root from tiles, %d inclusion proofs, "+
			"bundles\n", size, cosign.times[c.note.Text], size)
	}

	// Consistency from every smaller checkpointed size, and from some never checkpointed.
	consistency := 0
	for _, newSize := range sizes {
		c := checkpoints[newSize]
		olds := append([]int64{}, sizes...)
		for _, extra := range []int64{1, 2, 3, 100, newSize / 2, newSize - 1} {
			if extra > 0 {
				olds = append(olds, extra)
			}
		}
		for _, oldSize := range olds {
			if oldSize >= newSize {
				continue
			}
			oldRoot, err := tlog.TreeHash(oldSize, readers[newSize])
			if err != nil {
				fail("tlog.TreeHash(%d): %v", oldSize, err)
			}
			if old, ok := checkpoints[oldSize]; ok && old.root != oldRoot {
				fail("the checkpoint of size %d is not the tree of size %d's prefix", oldSize, newSize)
			}
			url := fmt.Sprintf("%sconsistency/%d/%d", *prefix, oldSize, newSize)
			proof, err := parseHashes(get(url, "", "immutable"))
			if err != nil {
				fail("%s: %v", url, err)
			}
			if err := tlog.CheckTree(proof, newSize, c.root, oldSize, oldRoot); err != nil {
				fail("%s: tlog.CheckTree: %v", url, err)
			}
			expected, err := tlog.ProveTree(newSize, oldSize, readers[newSize])
			if err != nil {
				fail("tlog.ProveTree(%d, %d): %v", newSize, oldSize, err)
			}
			if !equalProofs(expected, proof) {
				fail("%s: the consistency proof is not the one of the tiles", url)
			}
			consistency++
		}
	}

	// The checks refuse what they should: a changed root, a changed cosignature time, a wrong
	// inclusion or consistency proof.
	forged := bytes.Replace(latest.raw, []byte(base64.StdEncoding.EncodeToString(latest.root[:])),
		[]byte(base64.StdEncoding.EncodeToString(make([]byte, 32))), 1)
	if _, err := openCheckpoint(forged, *origin, logKey, cosign); err == nil {
		fail("a checkpoint with another root verifies")
	}
	for _, s := range latest.note.Sigs {
		if s.Name != cosign.name {
			continue
		}
		sig, _ := base64.StdEncoding.DecodeString(s.Base64)
		sig[4+7] ^= 1
		if cosign.Verify([]byte(latest.note.Text), sig[4:]) {
			fail("a cosignature with another time verifies")
		}
	}
	hr := readers[latestSize]
	good, _ := tlog.ProveRecord(latestSize, 0, hr)
	if latestSize > 1 && tlog.CheckRecord(good, latestSize, latest.root, 1, tlog.RecordHash(leaves[0])) == nil {
		fail("an inclusion proof for another index verifies")
	}
	tree, _ := tlog.ProveTree(latestSize, 1, hr)
	if len(tree) > 0 {
		tree[0][0] ^= 1
		if tlog.CheckTree(tree, latestSize, latest.root, 1, tlog.RecordHash(leaves[0])) == nil {
			fail("a changed consistency proof verifies")
		}
	}

	fmt.Printf("verified: %d checkpoints, %d tiles read, %d inclusion proofs, %d consistency proofs\n",
		len(sizes), tiles.reads, proofs, consistency)
}
