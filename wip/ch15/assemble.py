import sys, nbformat
sys.argv = [sys.argv[0]] + sys.argv[1:]
exec(open('wip/ch15/assemble_base.py').read().replace("c['id'] = f'ch12-{i:02d}'", "c['id'] = f'ch15-{i:02d}'"))
