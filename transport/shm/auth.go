//go:build linux

package shm

import (
	"crypto/hmac"
	"encoding/binary"
	"fmt"

	"github.com/gocoll/gocoll/internal/jobkey"
)

// Authentication, with Config.Key. Each rank's address carries a fresh
// random nonce (Listen's, which its segment repeats). The hello a rank
// puts in each peer's ring once it has mapped every segment carries its
// proof: an HMAC-SHA256 tag, cut to proofLen bytes, under a key derived
// from the job key (jobkey.PurposeSHM), of the two ranks and the peer's
// nonce and its own. The peer checks it against its own fresh nonce, so
// every pair proves the key both ways and the key never enters the
// rings. A hello without a proof where one is due, with one where none
// is, or with a wrong one fails Connect naming the rank. Once connected,
// slots carry no tags: only processes that may already read this
// process's memory (same user, ptrace rights) can reach the rings.

// helloProof returns this rank's proof for its hello to peer p, or nil
// without a key.
func (e *Endpoint) helloProof(r int, p *peer) []byte {
	if e.cfg.Key.IsZero() {
		return nil
	}
	return shmProof(e.cfg.Key, e.rank, r, e.home.Nonce, p.nonce)
}

// shmProof is the proof of rank from to rank to, whose nonces are
// fromNonce and toNonce.
func shmProof(k jobkey.Key, from, to int, fromNonce, toNonce uint64) []byte {
	var b [24]byte
	binary.BigEndian.PutUint32(b[0:], uint32(from))
	binary.BigEndian.PutUint32(b[4:], uint32(to))
	binary.BigEndian.PutUint64(b[8:], fromNonce)
	binary.BigEndian.PutUint64(b[16:], toNonce)
	t := jobkey.Tag(k.Derive(jobkey.PurposeSHM, []byte("hello")), b[:])
	return t[:proofLen]
}

// checkHello checks the proof in src's hello and records a failure for
// greet.
func (e *Endpoint) checkHello(src int, proof []byte) {
	var err error
	keyed := !e.cfg.Key.IsZero()
	switch {
	case keyed && len(proof) == 0:
		err = fmt.Errorf("shm: rank %d: rank %d holds no job key", e.rank, src)
	case !keyed && len(proof) != 0:
		err = fmt.Errorf("shm: rank %d: rank %d holds a job key and this rank none (GOCOLL_JOB_KEY)", e.rank, src)
	case keyed:
		p := e.peers[src]
		if p == nil || !hmac.Equal(proof, shmProof(e.cfg.Key, src, e.rank, p.nonce, e.home.Nonce)) {
			err = fmt.Errorf("shm: rank %d: rank %d holds another job key (its proof does not verify)", e.rank, src)
		}
	}
	if err == nil {
		return
	}
	e.mu.Lock()
	if e.helloErr[src] == nil && !e.hello[src] {
		e.helloErr[src] = err
	}
	e.mu.Unlock()
}
