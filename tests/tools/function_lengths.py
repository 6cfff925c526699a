#!/usr/bin/env python3
# Issue 24 item 4 measure: python3 tests/tools/function_lengths.py core importers exporters bindings cli io
# Function bodies over N lines in C++ sources: tracks braces at file level (namespaces do not count),
# a '{' opened at that level after text with '(' that is not a class/struct/enum/initialiser is a
# function; its length runs from the header's first line to the closing brace.
import re, sys, os
limit = 100
res = []
def scan(p):
    text = open(p, errors='replace').read()
    # strip comments and strings, keep newlines
    text = re.sub(r'//[^\n]*', '', text)
    text = re.sub(r'(?m)^\s*#.*$', '', text)
    text = re.sub(r'/\*.*?\*/', lambda m: '\n' * m.group(0).count('\n'), text, flags=re.S)
    text = re.sub(r'R"(\w*)\((.*?)\)\1"', lambda m: '""' + '\n' * m.group(0).count('\n'), text, flags=re.S)
    text = re.sub(r'"(\\.|[^"\\\n])*"', '""', text)
    text = re.sub(r"'(\\.|[^'\\\n])*'", "''", text)
    stack = []  # 'ns' or ('fn', start_line) or 'other'
    seg_start = 0
    line = 1
    seg_line = 1
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c == '\n':
            line += 1
        elif c == '{':
            at_top = all(s == 'ns' for s in stack)
            seg = text[seg_start:i]
            if at_top:
                s = seg.strip()
                if re.match(r'^(inline\s+)?namespace\b', s) or re.match(r'^extern\s+""', s):
                    stack.append('ns')
                elif '(' in s and not re.match(r'^(template\s*<.*>\s*)?(struct|class|enum|union)\b', s) and not re.search(r'=\s*$', s):
                    # first non-blank line of the header
                    lead = len(seg) - len(seg.lstrip())
                    start = seg_line + seg[:lead].count('\n')
                    stack.append(('fn', start, s.split('\n')[0][:90]))
                else:
                    stack.append('other')
            else:
                stack.append('other')
            seg_start = i + 1; seg_line = line
        elif c == '}':
            if stack:
                top = stack.pop()
                if isinstance(top, tuple):
                    length = line - top[1] + 1
                    if length > limit:
                        res.append((length, p, top[1], top[2]))
            seg_start = i + 1; seg_line = line
        elif c == ';':
            if all(s == 'ns' for s in stack):
                seg_start = i + 1; seg_line = line
        i += 1
for root in sys.argv[1:]:
    for dp, dn, fn in os.walk(root):
        if 'node_modules' in dp: continue
        for f in fn:
            if f.endswith(('.cc', '.h', '.cpp')):
                scan(os.path.join(dp, f))
res.sort(reverse=True)
for r in res: print(*r)
print(len(res), 'functions over', limit, 'lines')
