"""FBX documents as record trees, for tests that check rigel's FBX reading from the file itself
(test_fbx_transform.py). Binary files are parsed by Blender's own FBX parser (its add-on's
parse_fbx.py and data_types.py, loaded without Blender: they need no `bpy`); ASCII 7.x files by
the small tokenizer below. Neither shares code with rigel or Assimp.

A record is Node(id, props, elems): `id` its name (str), `props` its values (numbers, str, lists
for arrays), `elems` its child records.
"""
import glob
import importlib.util
import re
import sys
import types
from dataclasses import dataclass, field


@dataclass
class Node:
    id: str
    props: list = field(default_factory=list)
    elems: list = field(default_factory=list)


def blender_parser():
    """Blender's parse_fbx module, or None when Blender's FBX add-on is not installed."""
    if "fbxparse.parse_fbx" in sys.modules:
        return sys.modules["fbxparse.parse_fbx"]
    found = sorted(glob.glob("/usr/share/blender/scripts/addons/io_scene_fbx/parse_fbx.py") +
                   glob.glob("/usr/share/blender/*/scripts/addons/io_scene_fbx/parse_fbx.py"))
    if not found:
        return None
    folder = found[0].rsplit("/", 1)[0]
    package = types.ModuleType("fbxparse")
    package.__path__ = [folder]
    sys.modules["fbxparse"] = package
    for name in ("data_types", "parse_fbx"):
        spec = importlib.util.spec_from_file_location(f"fbxparse.{name}", f"{folder}/{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[f"fbxparse.{name}"] = module
        spec.loader.exec_module(module)
    return sys.modules["fbxparse.parse_fbx"]


def _from_blender(elem):
    props = []
    for p in elem.props:
        if isinstance(p, bytes):
            # An object's name "Name\x00\x01Class": the name.
            p = p.split(b"\x00\x01")[0].decode("utf-8", "replace")
        elif not isinstance(p, (int, float, str)):
            p = list(p)  # arrays
        props.append(p)
    return Node(elem.id.decode(), props, [_from_blender(e) for e in elem.elems])


_TOKEN = re.compile(r'"[^"]*"|[A-Za-z_][\w|]*\s*:|\*\d+|[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?'
                    r'|[{},]|[A-Za-z_]\w*')


def _parse_ascii(text):
    text = re.sub(r"(?m)^\s*;.*$", "", text)
    tokens = _TOKEN.findall(text)
    pos = 0

    def value(tok):
        if tok.startswith('"'):
            s = tok[1:-1]
            # An object's name "Class::Name": the name.
            return s.split("::", 1)[1] if "::" in s else s
        try:
            return int(tok)
        except ValueError:
            try:
                return float(tok)
            except ValueError:
                return tok  # a bare word (T, Y, ...)

    def node(key):
        nonlocal pos
        n = Node(key)
        while pos < len(tokens):
            tok = tokens[pos]
            if tok.endswith(":") or tok == "}":
                return n
            pos += 1
            if tok == ",":
                continue
            if tok == "{":
                while pos < len(tokens) and tokens[pos] != "}":
                    key = tokens[pos]
                    pos += 1
                    if key.endswith(":"):
                        n.elems.append(node(key[:-1].strip()))
                pos += 1  # the closing brace
                if n.props and isinstance(n.props[0], str) and n.props[0].startswith("*"):
                    # An array: "*N { a: v, v, ... }".
                    a = next((e for e in n.elems if e.id == "a"), None)
                    n.props, n.elems = [a.props if a else []], []
                return n
            n.props.append(tok if tok.startswith("*") else value(tok))
        return n

    root = Node("")
    while pos < len(tokens):
        key = tokens[pos]
        pos += 1
        if key.endswith(":"):
            root.elems.append(node(key[:-1].strip()))
    return root


def read(path):
    """The document's top records, as a Node whose elems are them; None when the file is a binary
    FBX and Blender's parser is not installed."""
    with open(path, "rb") as f:
        head = f.read(23)
    if head.startswith(b"Kaydara FBX Binary"):
        parser = blender_parser()
        if parser is None:
            return None
        root, _ = parser.parse(path)
        return _from_blender(root)
    with open(path, encoding="utf-8", errors="replace") as f:
        return _parse_ascii(f.read())
