import json,glob,sys,collections
runs=sys.argv[1:]
tab=collections.defaultdict(dict)
for r in runs:
    for f in glob.glob(f'{r}/rows-*.json'):
        for x in json.load(open(f))['rows']:
            if not x.get('chosen'): continue
            k=(x['op'],f"{x['rows']}x{x['cols']}",x['dtype'],x['implementation'][5:],x['schedule'])
            tab[k][r]=x['x_copy']
print('%-32s'%'case'+''.join('%9s'%r for r in runs))
for k in sorted(tab):
    print('%-32s'%' '.join(map(str,k))+''.join(('%9.3f'%tab[k][r]) if r in tab[k] else '%9s'%'-' for r in runs))
