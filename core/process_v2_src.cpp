// The compiled part of Boost.Process v2 (BOOST_PROCESS_V2_SEPARATE_COMPILATION): included here once.
#include <boost/process/v2/src.hpp>
