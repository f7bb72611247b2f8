#!/usr/bin/env python3
"""Records and replays engine dialogues, so that tests can speak to a stand-in that
prints exactly what a real engine printed.

  standin.py record TRANSCRIPT -- COMMAND...   run COMMAND, pass lines both ways,
                                               log them to TRANSCRIPT
  standin.py replay TRANSCRIPT                 be that engine again

A transcript has one line per line that crossed: '> ' what the engine read, '< '
what it printed, in the order the recorder saw them. Replaying, every line read
must be the next '> ' line (otherwise the stand-in names the difference on stderr
and exits 2); after it, the '< ' lines up to the next '> ' line are printed.
"""
import subprocess
import sys
import threading


def record(path, command):
    log = open(path, "w")
    lock = threading.Lock()
    engine = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1
    )

    def note(prefix, line):
        with lock:
            log.write(prefix + line + "\n")
            log.flush()

    def pump_out():
        for line in engine.stdout:
            line = line.rstrip("\n")
            note("< ", line)
            sys.stdout.write(line + "\n")
            sys.stdout.flush()

    out = threading.Thread(target=pump_out)
    out.start()
    for line in sys.stdin:
        line = line.rstrip("\n")
        note("> ", line)
        try:
            engine.stdin.write(line + "\n")
            engine.stdin.flush()
        except BrokenPipeError:
            break
    try:
        engine.stdin.close()
    except BrokenPipeError:
        pass
    out.join()
    sys.exit(engine.wait())


def replay(path):
    script = [l.rstrip("\n") for l in open(path)]
    at = 0
    while at < len(script) and script[at].startswith("< "):
        print(script[at][2:], flush=True)
        at += 1
    for line in sys.stdin:
        line = line.rstrip("\n")
        if at >= len(script):
            sys.stderr.write(f"stand-in: read '{line}' after the end of {path}\n")
            sys.exit(2)
        want = script[at][2:]
        if line != want:
            sys.stderr.write(f"stand-in: {path} line {at + 1}: read '{line}', the recording has '{want}'\n")
            print(f"info string stand-in diverged: read '{line}', recorded '{want}'", flush=True)
            sys.exit(2)
        at += 1
        while at < len(script) and script[at].startswith("< "):
            print(script[at][2:], flush=True)
            at += 1
        if line == "quit":
            return


if __name__ == "__main__":
    if len(sys.argv) >= 5 and sys.argv[1] == "record" and sys.argv[3] == "--":
        record(sys.argv[2], sys.argv[4:])
    elif len(sys.argv) == 3 and sys.argv[1] == "replay":
        replay(sys.argv[2])
    else:
        sys.stderr.write(__doc__)
        sys.exit(2)
