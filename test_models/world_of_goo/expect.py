#!/usr/bin/env python3
"""Re-derive the expect-* lines of the World of Goo fixtures from the bytes on
disk and compare them with the .txt files.

It uses make_fixtures.py's separate Parser (which only follows the pointers
in the file) and its reference evaluator, but NOT the in-memory fixture
descriptions: everything is computed from what was read back.

Usage:  python3 expect.py --check     (exit status 1 on any difference)
        python3 expect.py FILE...     (print the expect lines of those files)
"""

import os
import sys

sys.dont_write_bytecode = True
import make_fixtures as mf  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

# data file -> ('ok', pose times, options) | ('bad',) | ('notdetected',)
FILES = {
    'rot_1rps.anim.binltl': ('ok', mf.ROT_TIMES, ()),
    'rot_big.anim.binbig': ('ok', mf.ROT_TIMES, ()),
    'xform.anim.binltl': ('ok', mf.XFORM_TIMES, mf.XFORM_WITH),
    'xform64.anim.binltl64': ('ok', mf.XFORM_TIMES, mf.XFORM_WITH),
    'xformuni.anim.binuni': ('ok', mf.XFORM_TIMES, mf.XFORM_WITH),
    'steps.anim.binltl': ('ok', mf.STEPS_TIMES, ()),
    'scene.movie.binltl': ('ok', mf.SCENE_TIMES, ()),
    'sceneuni.movie.binuni': ('ok', mf.SCENE_TIMES, ()),
    'bad_ptr.anim.binltl': ('bad',),
    'bad_next.anim.binltl': ('bad',),
    'bad_interp.anim.binltl': ('bad',),
    'bad_type.anim.binltl': ('bad',),
    'bad_times.anim.binltl': ('bad',),
    'truncated.anim.binltl': ('bad',),
    'bad_embedded.movie.binltl': ('bad',),
    'bad_actor_ptr.movie.binltl': ('bad',),
    'image.png.binltl': ('notdetected',),
}


def expectations(fname):
    with open(os.path.join(HERE, fname), 'rb') as fh:
        data = fh.read()
    spec = FILES[fname]
    try:
        kind, L, obj = mf.parse_file(fname, data)
    except mf.NotDetected:
        assert spec[0] == 'notdetected', fname
        return ['expect-not-detected']
    except mf.Fail as e:
        assert spec[0] == 'bad', (fname, str(e))
        return ['expect-error-offset %d' % e.offset]
    assert spec[0] == 'ok', fname + ' parsed but should not'
    return mf.expect_lines(fname, kind, L, obj, spec[1], spec[2])


def txt_lines(fname):
    with open(os.path.join(HERE, mf.stem_of(fname) + '.txt')) as fh:
        return [l.rstrip('\n') for l in fh if l.startswith('expect-')]


def main(argv):
    if argv and argv[0] == '--check':
        bad = 0
        for fname in FILES:
            want = expectations(fname)
            try:
                have = txt_lines(fname)
            except FileNotFoundError:
                print('%-28s missing .txt' % fname)
                bad += 1
                continue
            if have != want:
                bad += 1
                print('%-28s DIFFERS' % fname)
                for l in want:
                    if l not in have:
                        print('   want ' + l)
                for l in have:
                    if l not in want:
                        print('   have ' + l)
            else:
                print('%-28s ok (%d expect lines)' % (fname, len(want)))
        return 1 if bad else 0
    for fname in argv:
        for l in expectations(fname):
            print(l)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
