#!/usr/bin/env python3
"""Unprivileged L2 hub for QEMU -netdev dgram over unix sockets.

Every frame one VM sends is copied to all the others, so N VMs share one
Ethernet segment without root, bridges or TAP devices.

usage: hub.py HUB_SOCKET PEER_SOCKET...
"""
import os
import socket
import sys

hub, peers = sys.argv[1], sys.argv[2:]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
if os.path.exists(hub):
    os.unlink(hub)
s.bind(hub)
while True:
    frame, src = s.recvfrom(65536)
    for peer in peers:
        if peer != src:
            try:
                s.sendto(frame, peer)
            except OSError:
                pass  # that VM is not up yet, or already gone
