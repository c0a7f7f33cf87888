# Takes README's screenshot of the add-on's import dialog (docs/blender_import.png):
# under Xvfb, Blender installs the add-on from its zip as a user would, opens
# File > Import > Classic game animation on a folder of samples with an archive
# selected, saves a screenshot of that window and quits.  Run by
# scripts/blender_screenshot.sh.
import bpy, os, sys
args = sys.argv[sys.argv.index("--") + 1:]
ZIP, FOLDER, OUT = args
bpy.ops.preferences.addon_install(filepath=ZIP, overwrite=True)
bpy.ops.preferences.addon_enable(module="io_import_retroanim")
state = {"step": 0}

def tick():
    s = state["step"]
    state["step"] += 1
    win = bpy.context.window_manager.windows[0]
    if s == 0:
        with bpy.context.temp_override(window=win):
            bpy.ops.import_scene.retroanim("INVOKE_DEFAULT", filepath=os.path.join(FOLDER, "several.si"))
        return 2.0
    if s == 1:
        wins = bpy.context.window_manager.windows
        w = wins[len(wins) - 1]
        with bpy.context.temp_override(window=w, area=w.screen.areas[0]):
            bpy.ops.screen.screenshot(filepath=OUT)
        return 1.0
    bpy.ops.wm.quit_blender()
    return None

bpy.app.timers.register(tick, first_interval=3.0)
