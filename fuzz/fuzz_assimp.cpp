// libFuzzer harness for the Assimp shim: an Assimp::Importer that holds only
// retroanim's importers (Assimp's own are unregistered, so garbage reaches no
// other loader) reads the input from memory with the validator on.  The first
// byte picks the file name extension Assimp is given (kHints); the rest is
// the file.  A file our importer accepts must pass Assimp's validation.
#include <assimp/BaseImporter.h>
#include <assimp/Importer.hpp>
#include <assimp/postprocess.h>
#include <assimp/scene.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "retroanim/assimp.hpp"

namespace {

const char *const kHints[] = {"ani",         "anim", "cinf", "anim.binltl", "movie.binltl",
                              "anim.binbig", "niff", "nif",  "mad"};

Assimp::Importer *g_importer;
std::vector<Assimp::BaseImporter *> g_builtin; // Assimp's own loaders, unregistered

void Release()
{
    delete g_importer;
    for (Assimp::BaseImporter *b : g_builtin) delete b;
}

Assimp::Importer &TheImporter()
{
    if (!g_importer) {
        g_importer = new Assimp::Importer();
        while (g_importer->GetImporterCount() > 0) {
            Assimp::BaseImporter *b = g_importer->GetImporter(size_t(0));
            g_builtin.push_back(b);
            g_importer->UnregisterLoader(b);
        }
        retroanim::RegisterImporters(*g_importer);
        // cinf=none through its own property: it reaches only the formats that declare it
        g_importer->SetPropertyString(retroanim::kOptionsProperty, "memory_limit=67108864");
        g_importer->SetPropertyString(retroanim::kCinfProperty, "none");
        std::atexit(Release); // before LeakSanitizer's check, which was registered first
    }
    return *g_importer;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    const char *hint = kHints[data[0] % (sizeof kHints / sizeof kHints[0])];
    Assimp::Importer &imp = TheImporter();
    const aiScene *s = imp.ReadFileFromMemory(data + 1, size - 1, aiProcess_ValidateDataStructure, hint);
    if (!s) {
        const char *err = imp.GetErrorString();
        // a refusal is fine; a scene our importer built that Assimp's validator rejects is not
        // (the validator's errors start so; ours start with the format id and may quote any name)
        if (std::strncmp(err, "Validation failed", 17) == 0) {
            std::fprintf(stderr, "retroanim scene fails Assimp validation: %s\n", err);
            std::abort();
        }
        return 0;
    }
    imp.FreeScene();
    return 0;
}
