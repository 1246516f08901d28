// servesim-gui: the Qt front end. Opens the scenario named on the command line, else the
// last file of the previous session, else the bundled quickstart as an untitled template.
#include <QApplication>
#include <QFileInfo>
#include <QSettings>
#include <QStringList>

#include "gui/main_window.h"

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setOrganizationName(QStringLiteral("servesim"));
  QApplication::setApplicationName(QStringLiteral("servesim-gui"));

  servesim::gui::MainWindow window;
  const QStringList args = QApplication::arguments();
  const QStringList recent = QSettings().value(QStringLiteral("files/recent")).toStringList();
  if (args.size() > 1) {
    window.open_file(args.at(1));
  } else if (!recent.isEmpty() && QFileInfo::exists(recent.first())) {
    window.open_file(recent.first());
  } else {
    window.open_template(servesim::gui::MainWindow::bundled_scenarios_dir() +
                         QStringLiteral("/quickstart.json"));
  }
  window.show();
  return QApplication::exec();
}
