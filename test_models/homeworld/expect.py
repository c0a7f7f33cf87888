#!/usr/bin/env python3
"""Re-derive the expect-* lines of the Homeworld .mad fixtures from the bytes
on disk and compare them with the .txt files.

It uses make_fixtures.py's Parser (which follows the stored offsets) and its
reference evaluator, but NOT the in-memory fixture descriptions: everything is
computed from what is read back from disk. Only the pose requests (which
animations, times and nodes: make_fixtures.POSES) are shared.

Usage:  python3 expect.py --check     (exit status 1 on any difference)
        python3 expect.py FILE...     (print the expect lines of those files)
"""

import os
import sys

sys.dont_write_bytecode = True
import make_fixtures as mf  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

# data file -> 'ok' | 'bad' | 'notdetected'
FILES = {
    'one_object.mad': 'ok',
    'timeline.mad': 'ok',
    'tcb.mad': 'ok',
    'spin.mad': 'ok',
    'window_cut.mad': 'ok',
    'out_of_order.mad': 'ok',
    'layout.mad': 'ok',
    'short.mad': 'ok',
    'truncated.mad': 'bad',
    'too_many_anims.mad': 'bad',
    'bad_array.mad': 'bad',
    'bad_name.mad': 'bad',
    'unterminated.mad': 'bad',
    'nan_key.mad': 'bad',
    'bad_times.mad': 'bad',
    'bad_window.mad': 'bad',
    'neg_keys.mad': 'bad',
    'homeworld2.mad': 'notdetected',
}


def expectations(fname):
    with open(os.path.join(HERE, fname), 'rb') as fh:
        data = fh.read()
    kind = FILES.get(fname)
    try:
        m, info = mf.parse_bytes(data)
    except mf.NotDetected as e:
        assert kind in (None, 'notdetected'), fname + ' not detected'
        return ['expect-not-detected', 'expect-error-offset %d' % e.offset]
    except mf.Fail as e:
        assert kind in (None, 'bad'), '%s: %s' % (fname, e)
        return ['expect-error-offset %d' % e.offset]
    assert kind in (None, 'ok'), fname + ' parsed but should not'
    return mf.expect_lines(m, info, mf.POSES.get(fname, []))


def txt_lines(fname):
    with open(os.path.join(HERE, mf.stem_of(fname) + '.txt')) as fh:
        return [l.rstrip('\n') for l in fh if l.startswith('expect-')]


def main(argv):
    if argv and argv[0] == '--check':
        bad = total = 0
        for fname in FILES:
            try:
                want = expectations(fname)
            except (OSError, AssertionError) as e:
                print('%-20s ERROR %s' % (fname, e))
                bad += 1
                continue
            try:
                have = txt_lines(fname)
            except FileNotFoundError:
                print('%-20s missing .txt' % fname)
                bad += 1
                continue
            total += len(want)
            if have != want:
                bad += 1
                print('%-20s DIFFERS' % fname)
                for l in want:
                    if l not in have:
                        print('   want ' + l)
                for l in have:
                    if l not in want:
                        print('   have ' + l)
        print('homeworld .mad fixtures: %d files, %d expect lines, %s' %
              (len(FILES), total, 'all match' if not bad else
               '%d file(s) differ' % bad))
        return 1 if bad else 0
    for fname in argv:
        for l in expectations(os.path.basename(fname)):
            print(l)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
