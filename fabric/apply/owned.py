"""What gpufabric owns in a line-based config (FRR, EOS, NX-OS), and the running config cut down to it.

A push must change only what gpufabric renders. A running config carries much more (users, AAA, TACACS, SNMP,
``feature ssh``, eAPI, licences, unused ports, hand-added routes); remediation computed against the whole running
config would delete all of it. Ownership works on the indented section tree, at every depth:

- a line (or section) is owned when the candidate or the previous push has a line with the same *key*;
- a key is the line itself, except for named objects, whose every entry shares the object's key
  (``ip prefix-list FABRIC-OUT seq 30 …`` is FABRIC-OUT's, so a stale entry of our list is ours to remove) and
  ``router bgp <asn>`` (one BGP instance per device: a new ASN replaces the old one);
- inside an owned section the same rule applies to its children, against the candidate's and the previous push's
  children of that section; a section owned only through its key (the old ``router bgp``) is owned whole.

The previous push (the applied config in the change record) is what lets a push remove what the plan no longer has:
a leaf taken out of the definition leaves its neighbor and port section in the previous push only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from fabric.apply.diff import normalize

_NAMED = (
    re.compile(r"^(router bgp)\b"),
    re.compile(r"^((?:ip|ipv6) prefix-list \S+)"),
    re.compile(r"^((?:ip |ipv6 )?access-list \S+)"),
    re.compile(r"^(route-map \S+)"),
    re.compile(r"^(bgp (?:community|as-path)-list (?:standard |expanded )?\S+)"),
)


@dataclass(slots=True)
class Node:
    """One line of an indented config and the lines nested under it."""

    text: str
    children: list[Node] = field(default_factory=list["Node"])


def parse(text: str) -> list[Node]:
    """The section tree of a config (comments, ``!`` and block terminators dropped).

    Example:
        >>> [(n.text, [c.text for c in n.children]) for n in parse("router bgp 1\\n neighbor a\\nhostname x\\n")]
        [('router bgp 1', ['neighbor a']), ('hostname x', [])]
    """
    root = Node("")
    stack: list[tuple[int, Node]] = [(-1, root)]
    for line in normalize(text).splitlines():
        depth = len(line) - len(line.lstrip())
        while stack[-1][0] >= depth:
            stack.pop()
        node = Node(line.strip())
        stack[-1][1].children.append(node)
        stack.append((depth, node))
    return root.children


def key(line: str) -> str:
    """The ownership key of a line: the named object it belongs to, else the line itself.

    Example:
        >>> key("ip prefix-list FABRIC-OUT seq 30 permit 10.0.0.0/8"), key("router bgp 65100"), key("hostname a")
        ('ip prefix-list FABRIC-OUT', 'router bgp', 'hostname a')
    """
    for pattern in _NAMED:
        if match := pattern.match(line):
            return match.group(1)
    return line


def owned_part(running: str, candidate: str, previous: str = "") -> str:
    """``running`` cut down to what gpufabric owns (see the module docstring), indented with one space per level.

    Example:
        >>> owned_part("username admin secret x\\nhostname a\\nip route 10.9.0.0/16 Null0\\n", "hostname b\\n", "hostname a\\n")
        'hostname a'
    """
    return "\n".join(_serialize(_owned(parse(running), [*parse(candidate), *parse(previous)]), 0))


def _owned(running: list[Node], references: list[Node]) -> list[Node]:
    keys = {key(ref.text) for ref in references}
    kept: list[Node] = []
    for node in running:
        if key(node.text) not in keys:
            continue
        same = [ref for ref in references if ref.text == node.text]
        if not same or not node.children:
            kept.append(node)  # owned through its key only, or a plain line: owned whole
            continue
        kept.append(Node(node.text, _owned(node.children, [c for ref in same for c in ref.children])))
    return kept


def _serialize(nodes: list[Node], depth: int) -> list[str]:
    lines: list[str] = []
    for node in nodes:
        lines.append(" " * depth + node.text)
        lines += _serialize(node.children, depth + 1)
    return lines


_NO_NEIGHBOR = re.compile(r"^(\s*)no neighbor (\S+)\b")


def collapse_neighbor_removal(lines: list[str], candidate: str) -> list[str]:
    """A BGP neighbor the candidate no longer has is removed with one ``no neighbor X``, not line by line.

    FRR refuses ``no neighbor swp3 description …`` once ``no neighbor swp3 interface …`` has deleted the neighbor;
    ``no neighbor X`` removes the neighbor with all its settings (FRR and EOS), address-family lines included.

    Example:
        >>> collapse_neighbor_removal(["router bgp 1", "  no neighbor swp3 interface peer-group F", "  no neighbor swp3 description l3"], "")
        ['router bgp 1', '  no neighbor swp3']
    """
    wanted = {m.group(1) for line in normalize(candidate).splitlines() if (m := re.match(r"^\s+neighbor (\S+)", line))}
    out: list[str] = []
    removed: set[str] = set()
    for line in lines:
        match = _NO_NEIGHBOR.match(line)
        if match is None or match.group(2) in wanted:
            out.append(line)
            continue
        if match.group(2) not in removed:
            removed.add(match.group(2))
            out.append(f"{match.group(1)}no neighbor {match.group(2)}")
    return out
