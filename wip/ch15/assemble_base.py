import re, sys, os, nbformat
def percent(path):
    cells, cur = [], None
    for line in open(path).read().split('\n'):
        m = re.match(r'^# %% (md|code)\s*(.*)$', line)
        if m:
            if cur: cells.append(cur)
            cur = {'type': m.group(1), 'tags': [t.strip() for t in m.group(2).split(',') if t.strip()], 'lines': []}
        else:
            cur['lines'].append(line)
    cells.append(cur)
    out = []
    for c in cells:
        text = '\n'.join(c['lines']).strip('\n')
        cell = nbformat.v4.new_markdown_cell(text) if c['type'] == 'md' else nbformat.v4.new_code_cell(text)
        if c['tags']: cell.metadata['tags'] = c['tags']
        out.append(cell)
    return out
def ipynb(path):
    return [c for c in nbformat.read(path, as_version=4).cells]
parts = sys.argv[2:]
nb = nbformat.v4.new_notebook()
nb.metadata = {'kernelspec': {'display_name': 'Python 3', 'language': 'python', 'name': 'python3'}, 'language_info': {'name': 'python'}}
for p in parts:
    if not os.path.exists(p):
        print('skip', p); continue
    nb.cells += percent(p) if p.endswith('.py') else ipynb(p)
for i, c in enumerate(nb.cells):
    c['id'] = f'ch12-{i:02d}'
    if c.cell_type == 'code':
        c.outputs, c.execution_count = [], None
nbformat.write(nb, sys.argv[1])
print(len(nb.cells), 'cells')
