// libretroanim_preload.so: makes unmodified Assimp programs (the `assimp`
// command line, aiImportFile from C, pyassimp) load the retroanim formats.
//
//   LD_PRELOAD=/usr/local/lib/libretroanim_preload.so assimp export walk.ani walk.glb
//
// It interposes Assimp::Importer's constructor (libassimp calls it through
// the PLT, so the C API's internal `new Importer` is caught too), runs the
// real constructor and registers one retroanim importer per format on the new
// Importer, which owns and deletes them (Assimp's Importer deletes its loaders
// in its destructor; RegisterLoader takes ownership).
//
// The registered importers allocate Assimp structures laid out as in the
// headers this module was compiled against; aiQuatKey changed size inside
// soname 5 (5.4.3).  So when the running libassimp reports another version
// than the one built against, the module registers nothing and says so once
// on stderr: the program then behaves as without the module.
#include <assimp/Importer.hpp>
#include <assimp/version.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "retroanim/assimp.hpp"

#ifndef RETROANIM_ASSIMP_BUILT_MAJOR
#error "RETROANIM_ASSIMP_BUILT_MAJOR/MINOR/PATCH must give the version of the Assimp headers (CMake sets them)"
#endif

namespace {

using Ctor = void (*)(Assimp::Importer *);

struct State {
    Ctor complete = nullptr; // Assimp::Importer::Importer() [complete object], C1
    Ctor base = nullptr;     // [base object], C2
    bool active = false;
};

const State &GetState()
{
    static State st;
    static std::once_flag once;
    std::call_once(once, [] {
        st.complete = reinterpret_cast<Ctor>(dlsym(RTLD_NEXT, "_ZN6Assimp8ImporterC1Ev"));
        st.base = reinterpret_cast<Ctor>(dlsym(RTLD_NEXT, "_ZN6Assimp8ImporterC2Ev"));
        if (!st.complete && !st.base) {
            std::fprintf(stderr, "retroanim preload: libassimp's Importer constructor not found; "
                                 "is the program linked with libassimp?\n");
            std::abort(); // nothing could construct the Importer the caller is building
        }
        if (!st.complete) st.complete = st.base;
        if (!st.base) st.base = st.complete;
        unsigned major = aiGetVersionMajor(), minor = aiGetVersionMinor(), patch = aiGetVersionPatch();
        st.active = major == RETROANIM_ASSIMP_BUILT_MAJOR && minor == RETROANIM_ASSIMP_BUILT_MINOR &&
                    patch == RETROANIM_ASSIMP_BUILT_PATCH;
        if (!st.active)
            std::fprintf(
                stderr,
                "retroanim preload: libassimp reports version %u.%u.%u but this module was built against "
                "%u.%u.%u; the retroanim formats are not registered (rebuild retroanim against this libassimp)\n",
                major, minor, patch, (unsigned)RETROANIM_ASSIMP_BUILT_MAJOR, (unsigned)RETROANIM_ASSIMP_BUILT_MINOR,
                (unsigned)RETROANIM_ASSIMP_BUILT_PATCH);
    });
    return st;
}

void Construct(Assimp::Importer *self, bool complete)
{
    const State &st = GetState();
    (complete ? st.complete : st.base)(self);
    if (st.active) retroanim::RegisterImporters(*self);
}

} // namespace

extern "C" {
// The Itanium C++ ABI names of Assimp::Importer::Importer(); defining them
// here puts this module ahead of libassimp in symbol lookup.
__attribute__((visibility("default"))) void _ZN6Assimp8ImporterC1Ev(Assimp::Importer *self) { Construct(self, true); }
__attribute__((visibility("default"))) void _ZN6Assimp8ImporterC2Ev(Assimp::Importer *self) { Construct(self, false); }
}
