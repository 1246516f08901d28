// Runs the GUI test classes: all of them, or the one named by the first argument (ctest runs
// each class as its own test). The rest of the arguments go to QTest.
#include <QApplication>
#include <QStandardPaths>
#include <QTest>
#include <cstring>
#include <memory>
#include <vector>

#include "gui_test_registry.h"

int main(int argc, char** argv) {
  QStandardPaths::setTestModeEnabled(true);  // QSettings of the tests stay out of ~/.config
  QApplication app(argc, argv);
  const char* only = argc > 1 && argv[1][0] != '-' ? argv[1] : nullptr;
  QApplication::setOrganizationName(QStringLiteral("servesim-tests"));
  // One settings file per test class: ctest runs the classes in parallel, and one class's
  // remembered sweep or recent files must not show up in another's window.
  QApplication::setApplicationName(only ? QStringLiteral("gui_tests-%1").arg(only)
                                        : QStringLiteral("gui_tests"));
  std::vector<char*> qtest_args = {argv[0]};
  for (int i = only ? 2 : 1; i < argc; ++i) qtest_args.push_back(argv[i]);

  int failures = 0;
  bool matched = false;
  for (const servesim::gui::test::Entry& entry : servesim::gui::test::registry()) {
    if (only && std::strcmp(only, entry.name) != 0) continue;
    matched = true;
    std::unique_ptr<QObject> test = entry.make();
    failures += QTest::qExec(test.get(), static_cast<int>(qtest_args.size()), qtest_args.data());
  }
  if (!matched) {
    qCritical("gui_tests: no test class named '%s'", only);
    return 2;
  }
  return failures == 0 ? 0 : 1;
}
