#!/usr/bin/env python3
"""Unprivileged L2 hub for QEMU -netdev dgram over unix sockets.

Every frame one VM sends is copied to all the others, so N VMs share one
Ethernet segment without root, bridges or TAP devices.

usage: hub.py [--rules FILE] HUB_SOCKET PEER_SOCKET...

With --rules, the hub re-reads FILE whenever it changes (checked every
50 ms, also while no frame flows). Each line "cut A B" drops every frame
between nodeA and nodeB, both ways, silently: the guests' links stay up, as
behind a switch that stopped forwarding. Peers are named by their socket
path, .../node<N>. Blank lines and "#" comments are ignored; an empty or
missing FILE connects everyone. After each re-read the hub copies the text
it applied to FILE.active, so a writer can wait until its rules are in
force (selftests/rdlm/lib.sh does).
"""
import os
import re
import select
import socket
import sys
import time
from collections import deque

POLL = 0.05  # seconds between checks of the rules file
# Frames kept for one guest that is not reading (it boots again, or is
# busy): seconds of traffic. Beyond that its oldest frames are dropped.
MAX_QUEUED = 20000


def log(msg):
    print("hub: " + msg, flush=True)


def node_of(path):
    m = re.search(r"node(\d+)$", path or "")
    return int(m.group(1)) if m else None


class Rules:
    def __init__(self, path):
        self.path = path
        self.key = None
        self.cuts = frozenset()
        self.dropped = 0

    def poll(self):
        try:
            st = os.stat(self.path)
            key = (st.st_ino, st.st_mtime_ns, st.st_size)
        except FileNotFoundError:
            key = None
        if key == self.key:
            return
        text = ""
        if key is not None:
            try:
                with open(self.path) as f:
                    text = f.read()
            except OSError:
                return  # replaced between stat and open: next poll
        self.key = key
        cuts = set()
        for line in text.splitlines():
            words = line.split("#", 1)[0].split()
            if not words:
                continue
            if (len(words) == 3 and words[0] == "cut" and
                    words[1].isdigit() and words[2].isdigit()):
                cuts.add(frozenset((int(words[1]), int(words[2]))))
            else:
                log("ignoring rule %r" % line)
        if cuts != self.cuts:
            log("%d frames dropped under the old rules; now: %s" % (
                self.dropped,
                ", ".join("cut %d %d" % tuple(sorted(c)) for c in
                          sorted(cuts, key=sorted)) or "all connected"))
            self.dropped = 0
        self.cuts = frozenset(cuts)
        # acknowledge: the text in force, written atomically
        tmp = self.path + ".active.tmp"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, self.path + ".active")

    def blocked(self, a, b):
        return frozenset((a, b)) in self.cuts


def main(argv):
    rules = None
    if len(argv) > 2 and argv[0] == "--rules":
        rules = Rules(argv[1])
        argv = argv[2:]
    if len(argv) < 2:
        sys.exit(__doc__)
    hub, peers = argv[0], argv[1:]
    peer_node = {p: node_of(p) for p in peers}
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    if os.path.exists(hub):
        os.unlink(hub)
    s.bind(hub)
    log("forwarding between %s" % ", ".join(os.path.basename(p) for p in peers))
    # Never wait for one guest (a guest that boots again reads nothing until
    # its NIC is up: a blocked hub would stall everyone), and lose nothing
    # for a guest that is only slow: what its socket does not take now waits
    # here, in order, and goes as soon as it does.
    pending = {p: deque() for p in peers}

    def flush(peer):
        q = pending[peer]
        while q:
            try:
                s.sendto(q[0], socket.MSG_DONTWAIT, peer)
            except BlockingIOError:
                return
            except OSError:
                q.clear()  # that VM is gone: nobody reads these
                return
            q.popleft()

    last = 0.0
    while True:
        waiting = any(pending.values())
        ready, _, _ = select.select([s], [], [], 0.001 if waiting else POLL)
        now = time.monotonic()
        if rules and now - last >= POLL:
            rules.poll()
            last = now
        if waiting:
            for peer in peers:
                flush(peer)
        if not ready:
            continue
        frame, src = s.recvfrom(65536)
        a = node_of(src)
        for peer in peers:
            if peer == src:
                continue
            if rules and rules.cuts and rules.blocked(a, peer_node[peer]):
                rules.dropped += 1
                continue
            q = pending[peer]
            if not q:
                try:
                    s.sendto(frame, socket.MSG_DONTWAIT, peer)
                    continue
                except BlockingIOError:
                    pass  # queued below
                except OSError:
                    continue  # that VM is not up yet, or already gone
            if len(q) >= MAX_QUEUED:
                q.popleft()
            q.append(frame)


if __name__ == "__main__":
    main(sys.argv[1:])
