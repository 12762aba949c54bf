# SPDX-License-Identifier: Apache-2.0
"""Shell-wrapped cases for the Codex differential test (codex_diff.py --family shell).

The real answer comes from the real runtime: `codex exec` (approval `never`) against
openai_stub.py, a scripted stand-in for the model API, whose script is the cases'
shell calls, one per model turn. Codex splits each `bash -lc SCRIPT` (tree-sitter),
matches the rules file, applies its forced-`rm` danger check, and either runs the
command or rejects it; the tool output the stub receives next says which:

    allowed     the command ran ("Process exited with code N")
    forbidden   a `forbidden` prefix rule ("policy forbids commands starting with")
    dangerous   the danger check ("rm -f style commands are not permitted")
    prompt      a `prompt` rule, which `never` cannot show ("approval required by policy")

The whole session runs in a fresh network namespace (`unshare -n`, loopback only,
the stub inside it) in a scratch project; the commands the generator writes touch
only scratch names (`zz`, `tmp1`), and the sandbox is `read-only` or
`danger-full-access` (alternating sessions; under `never` Codex decides the same way).
"""
import json
import os
import random
import shlex
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

RULES = """\
prefix_rule(pattern=["git", "push"], decision="forbidden")
prefix_rule(pattern=["make", "clean"], decision="forbidden")
prefix_rule(pattern=["printf"], decision="prompt")
prefix_rule(pattern=["touch"], decision="prompt")
prefix_rule(pattern=["echo", "hi"], decision="forbidden")
host_executable(name="touch", paths=["/usr/bin/touch"])
"""

RM_FORMS = ["rm -rf zz", "rm -fr zz", "rm -f zz", "rm -r -f zz", "rm -Rf zz", "rm -fR zz",
            "rm --force zz", "rm zz -f", "rm -r zz", "rm zz", "rm -- -f", "rm -rfv zz",
            "rm -vf zz", "rm --recursive --force zz", "rm -i zz", "/bin/rm -rf zz",
            "/usr/bin/rm -f zz", "./rm -rf zz", "sudo rm -rf zz", "sudo /bin/rm -rf zz",
            "sudo -n rm -rf zz", "env A=1 rm -rf zz", "FOO=1 rm -rf zz", "command rm -rf zz",
            "rm -rf", "rm -f -- zz", "rm --forc zz", "rm -F zz", "rm - zz", "rm --f zz"]
RM_WRAP = ["{}", "({})", "echo $({})", "echo `{}`", "if true; then {}; fi",
           "{} > /dev/null", "{} 2>&1", "true && {}", "true; {}", "printf x | {}",
           "for t in a b; do {}; done", "{{ {}; }}", "while false; do {}; done",
           "echo \"$({})\"", "{} &", "! {}", "x=$({})", "case a in a) {};; esac",
           "{} # note", "echo '{}'", "cmd=rm; $cmd -rf zz", "if then {}"]
NAMES = ['"git" push', "g\"it\" push", "'git' push", "gi't' push", "\\git push", "git\\ push",
         "git \\push", "git pu\\sh", '"git push"', "git 'push'", 'git "push"', "git push origin",
         '"make" clean', "make 'clean'", "./make clean", "bin/make clean", "../make clean",
         "/usr/bin/make clean", "make/ clean", "./bin/../make clean", "echo hi", "\\echo hi",
         "echo \\hi", "e\\cho hi", "echo 'hi'", '"echo" hi', "echo hi there",
         "printf x", "\\printf x", "'printf' x", 'printf "x"', "printf a#b", "printf a #b",
         "printf ~", "printf ~/x", "printf a~b", "printf ]", "printf a]", "printf [a]",
         "printf {}", "printf a{b,c}", "printf {a}", "printf =x", "printf a=b", "printf ^",
         "printf a^b", "printf %", "printf @x", "printf a:b", "printf 'a b'", "printf \"a\\\"b\"",
         "printf a\\ b", "printf \\#", "printf 1 2", "printf -- -x", "printf !", "printf a!b",
         "printf +x", "printf ,", "printf a,b", "printf *", "printf ?", "printf a*b",
         "printf $'x'", "printf $\"x\"", "printf \"\"", "printf ''", "printf '$x'",
         "printf \"$x\"", "printf x\\\ny", "touch zz", "/usr/bin/touch zz", "/bin/touch zz",
         "./touch zz", "A=1 printf x", "printf x; ls", "ls && printf x", "ls | printf x",
         "ls || git push", "ls\ngit push", "ls;;git push", "git push &", "git push && ",
         "printf x 2>/dev/null", "printf x < /dev/null", "printf x > zz", "(printf x)",
         "{ printf x; }", "printf x | cat", "time printf x", "exec printf x", "true"]
HEREDOCS = ["printf <<'EOF'\nx\nEOF", "printf <<EOF\nx\nEOF", "cat <<'EOF'\nx\nEOF",
            "printf x <<'EOF'\nbody\nEOF", "git push <<'EOF'\nx\nEOF", "printf <<-EOF\n\tx\n\tEOF",
            "printf <<< x", "printf x > zz <<'EOF'\nx\nEOF", "printf <<'EOF' | cat\nx\nEOF",
            "A=1 printf <<'EOF'\nx\nEOF", "\"printf\" <<'EOF'\nx\nEOF", "make clean <<'EOF'\nx\nEOF",
            "printf $x <<'EOF'\nx\nEOF", "printf <<'EOF' # c\nx\nEOF", "rm -rf zz <<'EOF'\nx\nEOF",
            "printf <<'EOF'\nx\nEOF\nls"]


RM_FLAGS = ["-r", "-f", "-R", "-v", "-i", "--force", "--recursive", "--", "-rf", "-fr", "-vf",
            "-x", "-F", "-rfv", "--f", "-", "-ff", "--no-preserve-root", "-Rv", "'-f'", "\"-rf\""]
RM_PREFIX = ["", "", "", "sudo ", "sudo -n ", "env ", "env A=1 ", "env -i ", "FOO=1 ", "A=1 B=2 ",
             "command ", "nice ", "time ", "exec ", "sudo env ", "env sudo ", "/usr/bin/sudo "]
RM_NAMES = ["rm", "rm", "rm", "/bin/rm", "/usr/bin/rm", "./rm", "bin/rm", "\"rm\"", "'rm'", "r\\m",
            "\\rm", "rm/", "xrm", "rmdir"]
WORD_CHARS = "abcxyz019=~{}[]^#?*%@:+,.!-/_"


def rm_command(r):
    """A generated rm command: prefix, name, flags and targets in any order."""
    args = [r.choice(RM_FLAGS) for _ in range(r.randint(0, 3))] + \
        ["zz"] * r.randint(0, 2)
    r.shuffle(args)
    return (r.choice(RM_PREFIX) + r.choice(RM_NAMES) + " " + " ".join(args)).strip()


def wrapped(r, cmd, depth=0):
    """cmd inside 0-2 generated constructs."""
    if depth >= 2 or r.random() < 0.35:
        return cmd
    w = r.choice([x for x in RM_WRAP if "{}" in x])
    return wrapped(r, w.format(cmd), depth + 1)


def gen_word(r):
    """A generated argument: random characters, sometimes quoted or escaped."""
    w = "".join(r.choice(WORD_CHARS) for _ in range(r.randint(1, 4)))
    k = r.random()
    if k < 0.15:
        return "'" + w + "'"
    if k < 0.25 and "\\" not in w:
        return '"' + w + '"'
    if k < 0.32:
        return "\\" + w
    return w


def gen_name(r):
    """A rule's program spelled in one of the ways a script can spell it."""
    cmd = r.choice(["git push", "make clean", "printf x", "echo hi", "touch zz"])
    name, rest = cmd.split(" ", 1)
    k = r.random()
    if k < 0.4:
        spelled = name
    elif k < 0.5:
        spelled = '"' + name + '"'
    elif k < 0.6:
        spelled = "'" + name + "'"
    elif k < 0.7:
        i = r.randint(1, len(name) - 1)
        spelled = name[:i] + r.choice(['"', "'"]) + name[i:] + r.choice(['"', "'"])
        spelled = spelled if spelled.count('"') % 2 == 0 and spelled.count("'") % 2 == 0 else name
    elif k < 0.8:
        spelled = "\\" + name
    elif k < 0.9:
        spelled = r.choice(["./", "bin/", "/usr/bin/", "../"]) + name
    else:
        i = r.randint(0, len(name) - 1)
        spelled = name[:i] + "\\" + name[i:]
    words = [spelled, rest] + [gen_word(r) for _ in range(r.randint(0, 2))]
    return " ".join(words)


def script_case(r):
    """One shell-wrapped case: (family, script)."""
    k = r.random()
    if k < 0.2:
        return "danger", wrapped(r, rm_command(r))
    if k < 0.35:
        return "words", gen_name(r)
    if k < 0.45:
        return "words", "printf " + " ".join(gen_word(r) for _ in range(r.randint(1, 3)))
    k = r.random()
    if k < 0.4:
        form = r.choice(RM_FORMS)
        wrap = r.choice(RM_WRAP)
        return "danger", wrap.format(form) if "{}" in wrap else wrap
    if k < 0.85:
        s = r.choice(NAMES)
        if r.random() < 0.3:
            s = r.choice(["ls; ", "true && ", "ls | ", ""]) + s + r.choice(["", "; true", " && ls", " | cat"])
        return "words", s
    return "heredoc", r.choice(HEREDOCS)


def cases(seed, n):
    r = random.Random(seed)
    out = []
    for _ in range(n):
        fam, s = script_case(r)
        out.append({"family": fam, "script": s})
    return out


def classify(output):
    if "policy forbids commands" in output or ("rejected:" in output and "rm -f style" not in output
                                                and "blocked by policy" not in output
                                                and "approval required" not in output):
        return "forbidden"
    if "rm -f style" in output or "blocked by policy" in output:
        return "dangerous"
    if "approval required by policy" in output:
        return "prompt"
    if "Process exited with code" in output or "Exit code:" in output:
        return "allowed"
    return "unknown:" + output[:200]


def run_session(codex, batch, sandbox, work):
    """Run one codex exec session over `batch`; the outcome of each case."""
    home = os.path.join(work, "home")
    proj = os.path.join(work, "proj")
    os.makedirs(os.path.join(home, "rules"), exist_ok=True)
    os.makedirs(proj, exist_ok=True)
    with open(os.path.join(home, "rules", "default.rules"), "w") as f:
        f.write(RULES)
    with open(os.path.join(work, "script.json"), "w") as f:
        json.dump([{"shell": c["script"]} for c in batch] + ["Done."], f)
    inner = f"""
set -e
ip link set lo up 2>/dev/null || true
python3 {shlex.quote(os.path.join(HERE, 'openai_stub.py'))} --script {work}/script.json \\
    --port-file {work}/port --log {work}/req.jsonl --idle 30 &
for i in $(seq 100); do [ -s {work}/port ] && break; sleep 0.05; done
port=$(cat {work}/port)
cat > {home}/config.toml <<TOML
model = "gpt-5"
model_provider = "stub"
approval_policy = "never"
sandbox_mode = "{sandbox}"
[model_providers.stub]
name = "stub"
base_url = "http://127.0.0.1:$port/v1"
wire_api = "responses"
TOML
cd {proj}
HOME={home} CODEX_HOME={home} timeout 900 {shlex.quote(codex)} exec --skip-git-repo-check go >/dev/null 2>{work}/err.txt || true
kill %1 2>/dev/null || true
"""
    wrap = ["unshare", "-n", "bash", "-c", inner] if os.geteuid() == 0 else ["bash", "-c", inner]
    subprocess.run(wrap, check=True, timeout=1000)
    outputs = {}
    with open(os.path.join(work, "req.jsonl")) as f:
        for line in f:
            for it in json.loads(line)["body"].get("input", []):
                if it.get("type") == "function_call_output":
                    out = it.get("output")
                    outputs[it["call_id"]] = out if isinstance(out, str) else json.dumps(out)
    return [classify(outputs.get("call_stub_%d_1" % (i + 1), "missing")) for i in range(len(batch))]


def real_outcomes(codex, all_cases, batch=150, jobs=2, sandboxes=("read-only", "danger-full-access")):
    import concurrent.futures
    chunks = [all_cases[i:i + batch] for i in range(0, len(all_cases), batch)]

    def one(item):
        idx, chunk = item
        sb = sandboxes[idx % len(sandboxes)]
        with tempfile.TemporaryDirectory(prefix="cxdiff") as work:
            got = run_session(codex, chunk, sb, work)
        return [dict(c, sandbox=sb, codex=g) for c, g in zip(chunk, got)]
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        res = list(pool.map(one, enumerate(chunks)))
    return [c for chunk in res for c in chunk]


def cwd_of_session(case):
    return case.get("cwd", "/proj")


def docket_outcomes(driver, decided):
    text = "".join(json.dumps(dict(c, rules=RULES)) + "\n" for c in decided)
    p = subprocess.run([driver, "--shell"], input=text.encode(), capture_output=True, check=True)
    return [json.loads(line)["outcome"] for line in p.stdout.decode().splitlines()]


if __name__ == "__main__":
    sys.exit("use codex_diff.py --family shell")
