# a Claude rule with 40 stars is decided at once (the old backtracking glob
# took 1.7x longer per star: hours) and keeps its meaning: any run of stars
# is one "**", so Edit(****...*./src/**) needs a component ending in "." before "/src"
stars=$(printf '%*s' 40 '' | tr ' ' '*')
printf '{"permissions":{"deny":["Edit(%s./src/**)","Read(/%s/.env)"],"allow":["Read(/home/**)"]}}\n' \
	"$stars" "$stars" > settings.json
ctx='{"platform":"linux","cwd":"/home/dev/app","workspace_roots":["/home/dev/app"],"env":{"HOME":"/home/dev"}}'
for call in '{"tool":"Edit","args":{"file_path":"/home/dev/app/a/b/c/d/e/f/g/h/i/j/k/l/m/src/x.c"}}' \
	'{"tool":"Edit","args":{"file_path":"/home/dev/app/a/b/c/d/e/f/g/h/i/j/k/l/m./src/x.c"}}' \
	'{"tool":"Read","args":{"file_path":"/home/dev/app/a/b/c/d/e/f/g/h/i/j/.env"}}' \
	'{"tool":"Read","args":{"file_path":"/home/dev/app/a/b/c/d/e/f/g/h/i/j/env"}}'; do
	docket policy eval claude:settings.json --context "$ctx" --call "$call" | head -1 || exit
done
