// The page template and the bundled libraries, embedded into the binary at build time
// (cli/preview/CMakeLists.txt generates preview_assets.cc).
#ifndef RIGEL_CLI_PREVIEW_PREVIEW_ASSETS_H_
#define RIGEL_CLI_PREVIEW_PREVIEW_ASSETS_H_

#include <string_view>

namespace rigel::preview {

// The HTML template (web/page.html) with its placeholders.
std::string_view PageTemplate();
// page.js with three.js, OrbitControls and uPlot, bundled and minified (esbuild).
std::string_view PageScript();
// page.css with uPlot's stylesheet.
std::string_view PageStyle();
// "three X, uplot Y, esbuild Z": the versions of the packages the bundle was made from.
std::string_view AssetVersions();
// False when the build found no node_modules (run npm ci in cli/preview).
bool AssetsEmbedded();

}  // namespace rigel::preview

#endif  // RIGEL_CLI_PREVIEW_PREVIEW_ASSETS_H_
