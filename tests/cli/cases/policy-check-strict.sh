# warnings (a deny the engine does not apply to `env curl`, an allow of an
# interpreter) pass policy check (exit 0), and fail it with --strict (exit 1)
cat > p.yaml <<'P'
version: 1
commands:
  - pattern: [curl]
    decision: deny
  - pattern: [python3]
    decision: allow
P
docket policy check p.yaml
echo "exit $?"
docket policy check p.yaml --strict
