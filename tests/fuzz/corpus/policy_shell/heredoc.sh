python3 <<'PY' > /tmp/o
print(1)
PY
