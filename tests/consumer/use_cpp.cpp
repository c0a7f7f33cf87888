// C++ use: register the importers on an Assimp::Importer and read a file.
#include <assimp/Importer.hpp>
#include <assimp/postprocess.h>
#include <assimp/scene.h>
#include <retroanim/assimp.hpp>

#include <cstdio>

int main(int argc, char **argv)
{
    if (argc < 2) return 2;
    Assimp::Importer importer;
    retroanim::RegisterImporters(importer);
    const aiScene *scene = importer.ReadFile(argv[1], aiProcess_ValidateDataStructure);
    if (!scene) {
        std::fprintf(stderr, "%s\n", importer.GetErrorString());
        return 1;
    }
    std::printf("%u animation(s), %u channel(s)\n", scene->mNumAnimations,
                scene->mNumAnimations ? scene->mAnimations[0]->mNumChannels : 0u);
    return 0;
}
