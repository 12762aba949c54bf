# a YAML policy that is not UTF-8 is refused with the line and column of the
# first bad byte (libfyaml 0.7 looped forever on a bad byte in a directive);
# a blank file is an empty policy (its check once read past the buffer)
printf '%b' '%e\xe0e' > directive.yaml
printf 'version: 1\ntools:\n  deny: ["Read(\xff)"]\n' > scalar.yaml
printf '\n' > blank.yaml
for f in directive.yaml scalar.yaml blank.yaml; do
	docket policy check "$f"
	echo "$f: exit $?"
done
exit 2
