#!/usr/bin/env python3
"""Re-derive the expect-* lines of the NIFF fixtures from the bytes on disk and
compare them with the .txt files.

It uses make_fixtures.py's separate Parser (which walks the lists by their
size fields and follows the index links) and its reference evaluator, and for
the geometry fixtures make_geometry.py's GeoReader and geometry rules, but NOT
the in-memory fixture descriptions: everything is computed from what was read
back. Only the pose requests (which times and nodes, make_fixtures.POSES,
AT_STEP and make_geometry.POSES) are shared.

Usage:  python3 expect.py --check     (exit status 1 on any difference)
        python3 expect.py FILE...     (print the expect lines of those files)
"""

import os
import sys

sys.dont_write_bytecode = True
import make_fixtures as mf  # noqa: E402
import make_geometry as mg  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

# data file -> 'ok' | 'bad' | 'notdetected'
FILES = {
    'full3.niff': 'ok',
    'keys.niff': 'ok',
    'static.niff': 'ok',
    'camera.niff': 'ok',
    'channels.niff': 'ok',
    'billboard.niff': 'ok',
    'names.nif': 'ok',
    'orders.niff': 'ok',
    'seam.niff': 'ok',
    'ik_chain.niff': 'ok',
    'truncated.niff': 'bad',
    'bad_listsize.niff': 'bad',
    'bad_child.niff': 'bad',
    'cycle.niff': 'bad',
    'bad_nextkey.niff': 'bad',
    'bad_name.niff': 'bad',
    'bad_anim_link.niff': 'bad',
    'bad_channel.niff': 'bad',
    'bad_chain_joint.niff': 'bad',
    'bad_chain_link.niff': 'bad',
    'netimmerse.nif': 'notdetected',
}
FILES.update(mg.FILES)        # geometry, textures, ci_palette and their broken files


def expectations(fname):
    with open(os.path.join(HERE, fname), 'rb') as fh:
        data = fh.read()
    kind = FILES.get(fname)
    if fname in mg.FILES:         # make_geometry.py's reader on top of the Parser
        lines = mg.expectations_from_bytes(fname, data)
        assert (kind == 'bad') == lines[0].startswith('expect-error-offset'), \
            fname
        return lines
    try:
        sc, _parser = mf.parse_bytes(data)
    except mf.NotDetected:
        assert kind in (None, 'notdetected'), fname + ' not detected'
        return ['expect-not-detected']
    except mf.Fail as e:
        assert kind in (None, 'bad'), '%s: %s' % (fname, e)
        return ['expect-error-offset %d' % e.offset]
    assert kind in (None, 'ok'), fname + ' parsed but should not'
    return mf.expect_lines(sc, mf.stem_of(fname), mf.POSES.get(fname, []),
                           mf.step_poses(fname))


def txt_lines(fname):
    with open(os.path.join(HERE, mf.stem_of(fname) + '.txt')) as fh:
        return [l.rstrip('\n') for l in fh if l.startswith('expect-')]


def main(argv):
    if argv and argv[0] == '--check':
        bad = 0
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
            if have != want:
                bad += 1
                print('%-20s DIFFERS' % fname)
                for l in want:
                    if l not in have:
                        print('   want ' + l)
                for l in have:
                    if l not in want:
                        print('   have ' + l)
            else:
                print('%-20s ok (%d expect lines)' % (fname, len(want)))
        return 1 if bad else 0
    for fname in argv:
        for l in expectations(os.path.basename(fname)):
            print(l)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
