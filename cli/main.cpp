// sonata's entry point: everything happens in cli::run.
#include "cli/app.hpp"

int main(int argc, char** argv) { return sonata::cli::run(argc, argv); }
